"""Intended gaps (a triage says: by design) are no failures: each score on the pages leaves them
out (``parity.pure.scores``, the headline) with the raw figure beside it, and a heatmap cell
whose every gap is intended is drawn apart from the failing ones."""

import datetime

import pytest

from parity import selectors
from parity.dashboard.presenters import heatmap_cells
from parity.models import Project
from parity.services.triage import TriageRequest, triage_create
from tests.parity.dashboard_scenario import A, B, upload_history


@pytest.fixture
def b_intended_on_neuron(upload_run, xla) -> Project:
    """neuron lacks test_b.py's 4 tests (b1 skipped, b2-b4 missing): a file exemption says it
    is meant to. Its other 6 of the reference's 10 passing tests pass."""
    upload_history(upload_run)
    request = TriageRequest(
        kind="intended", match=B, backend="neuron", note="no neuron kernel, by design"
    )
    triage_create(project=xla, request=request)
    return xla


def _cell(heatmap, file: str, backend: str):
    row = next(row for row in heatmap.rows if row.name == file)
    return next(cell for cell in row.cells if cell.backend == backend)


def test_a_cell_whose_gaps_are_all_intended_is_drawn_apart(b_intended_on_neuron):
    heatmap = heatmap_cells(selectors.heatmap(project=b_intended_on_neuron))
    cell = _cell(heatmap, B, "neuron")
    assert (cell.gaps, cell.intended) == (4, 4)
    assert cell.css == "cell sintended"  # not the dark "s0 absent" of a file never run
    assert cell.label == "intended · 4"
    assert "4 of them intended" in cell.counts_text


def test_intended_gaps_are_out_of_the_headline_and_the_worst_first_sort(b_intended_on_neuron):
    heatmap = selectors.heatmap(
        project=b_intended_on_neuron, query=selectors.HeatmapQuery(sort="neuron")
    )
    # neuron's only gaps are the intended ones: nothing of its own sorts first.
    assert heatmap.rows[0].name != B
    assert _cell(heatmap, B, "neuron").parity is None  # every compared test is intended
    neuron = next(b for b in heatmap.backends if b.backend == "neuron")
    assert (neuron.scores.headline, neuron.scores.raw) == (1.0, 0.6)
    assert neuron.scores.differs


def test_the_overview_shows_the_headline_score_with_the_raw_one(b_intended_on_neuron):
    (card,) = selectors.project_cards()
    neuron = next(b for b in card.backends if b.name == "neuron")
    assert neuron.scores.headline == 1.0 and neuron.scores.raw == 0.6
    tpu = next(b for b in card.backends if b.name == "tpu")
    assert tpu.scores.headline == tpu.scores.raw and not tpu.scores.differs
    since = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
    trends = selectors.score_trends(since=since, projects=[b_intended_on_neuron])
    assert trends[b_intended_on_neuron.slug]["neuron"]["score"][-1] == 1.0


def test_a_cell_with_failures_besides_intended_gaps_keeps_its_colour(upload_run, xla):
    upload_history(upload_run)
    request = TriageRequest(
        kind="intended", match=f"{A}::TestA::test_a2", backend="tpu", note="by design"
    )
    triage_create(project=xla, request=request)
    cell = _cell(heatmap_cells(selectors.heatmap(project=xla)), A, "tpu")
    # tpu: a1 and a3 pass, a2 intended, a4 error: 2 of the 3 meant to run.
    assert (cell.gaps, cell.intended) == (2, 1)
    assert cell.label == "2/3" and cell.css.startswith("cell s3")
