"""States from history on the surfaces (issue 46): a test's flaky or broken state, read from
the engine's ``TestHistory`` row by one rule (``parity.definitions.history_standings``), on
the test page and its API, the gaps page, API and CSV (``history``, ``?history=``), and the
heatmap's and file page's flaky counts; none of it for a project that keeps no states from
history, and no query for it there."""

import csv
import datetime
import io

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from parity import result_reads
from parity.dashboard.presenters import HeatCell
from parity.definitions import history_standing
from parity.engine import parity_recompute
from parity.models import Gap, HistoryState, Outcome, Project, TestCase, TestHistory
from parity.selectors import GapsQuery, gaps_list
from parity.selectors.files import file_grid
from parity.selectors.fragments import file_cell_counts
from tests.parity.engine.rows import results_upload, run_at

P, F = Outcome.PASSED, Outcome.FAILED
A = [f"test/test_a.py::T::t{n}" for n in range(3)]
START = datetime.datetime(2026, 5, 1, tzinfo=datetime.UTC)
HOURS = [START + datetime.timedelta(hours=n) for n in range(6)]


def test_broken_fails_steadily_since_the_first_run_of_its_streak():
    row = TestHistory(
        outcomes="PFPFFF",
        commits=[f"c{n}" for n in range(6)],
        ats=HOURS,
        state=HistoryState.BROKEN,
        since=HOURS[5],  # the run that judged it broken
        runs=6,
        failures=4,
        flips=2,
        rank=0.3,
    )
    shown = history_standing(row)
    assert (shown.state, shown.since, shown.since_commit) == ("broken", HOURS[3], "c3")
    assert shown.label == "broken: failing steadily since 2026-05-01 03:00 (c3)"


def test_flaky_is_flaky_since_the_run_that_judged_it_so():
    row = TestHistory(
        outcomes="PFPFP", commits=list("abcde"), ats=HOURS[:5], state=HistoryState.FLAKY,
        since=HOURS[3], runs=5, failures=2, flips=4, rank=0.1,
    )  # fmt: skip
    shown = history_standing(row)
    assert (shown.state, shown.since, shown.since_commit) == ("flaky", HOURS[3], "d")
    assert shown.label.startswith("flaky: 4 flips in 5 runs, 2 failed since")
    row.state = HistoryState.NONE
    assert history_standing(row) is None


def _gaps_with_history(project: Project) -> None:
    """tpu fails A[0] (broken there), A[1] (flaky there, its gap marked) and A[2] (neither)."""
    cpu = run_at(project, "cpu", START)
    results_upload(cpu, dict.fromkeys(A, P))
    parity_recompute(run=cpu)
    tpu = run_at(project, "tpu", START + datetime.timedelta(hours=1))
    results_upload(tpu, dict.fromkeys(A, F))
    parity_recompute(run=tpu)
    tests = {t.key: t for t in TestCase.objects.filter(project=project)}
    for key, state, outcomes in ((A[0], "broken", "PFFF"), (A[1], "flaky", "FPFP")):
        TestHistory.objects.create(
            project=project, backend=tpu.backend, test=tests[key], outcomes=outcomes,
            commits=["c0", "c1", "c2", "c3"], ats=HOURS[:4], state=state, since=HOURS[3],
            runs=4, failures=outcomes.count("F"), flips=2, rank=0.2,
        )  # fmt: skip
    Gap.objects.filter(project=project, test__key=A[1]).update(flaky=True)


def _keep_history(project: Project, on: bool) -> None:
    project.history_rules = {"enabled": on}
    project.save(update_fields=["history_rules"])


@pytest.mark.django_db
def test_the_gaps_list_filters_and_carries_the_history_state(project, api):
    _gaps_with_history(project)
    _keep_history(project, True)
    states = {g.test.key: g.history_state for g in gaps_list(project=project)}
    assert states == {A[0]: "broken", A[1]: "flaky", A[2]: ""}
    for state, key in (("broken", A[0]), ("flaky", A[1])):
        listed = gaps_list(project=project, query=GapsQuery(history=state))
        assert [g.test.key for g in listed] == [key]
    url = f"/api/v1/projects/{project.slug}/gaps/"
    body = api.get(url).json()
    assert {g["test"]: g["history"] for g in body["results"]} == states
    assert [g["test"] for g in api.get(url, {"history": "broken"}).json()["results"]] == [A[0]]
    response = Client().get(f"/p/{project.slug}/gaps.csv?open=1")
    body = b"".join(response.streaming_content) if response.streaming else response.content
    rows = csv.DictReader(io.StringIO(body.decode()))
    assert {r["test"]: (r["history"], r["tracking"]) for r in rows} == {
        A[0]: ("broken", "untracked"),  # broken is no triage
        A[1]: ("flaky", "flaky"),
        A[2]: ("", "untracked"),
    }
    page = Client().get(f"/p/{project.slug}/gaps/?open=1").content.decode()
    assert "broken since 2026-05-01" in page and 'name="history"' in page


@pytest.mark.django_db
def test_a_project_without_history_reads_none_and_pays_nothing(project, api):
    _gaps_with_history(project)  # windows left from before it turned them off
    _keep_history(project, False)
    listed = gaps_list(project=project)
    assert "history_state" not in listed.query.annotations
    assert not gaps_list(project=project, query=GapsQuery(history="broken")).exists()
    body = api.get(f"/api/v1/projects/{project.slug}/gaps/").json()
    assert {g["history"] for g in body["results"]} == {""}
    test = TestCase.objects.get(project=project, key=A[0])
    with CaptureQueriesContext(connection) as queries:
        page = result_reads.testcase_page(project=project, test=test)
    assert all(line.history is None for line in page.lines)
    assert not any("parity_testhistory" in q["sql"] for q in queries.captured_queries)
    grid = file_grid(project=project, file="test/test_a.py")
    assert grid.flaky == {}
    page = Client().get(f"/p/{project.slug}/gaps/?open=1").content.decode()
    assert "broken since" not in page and 'name="history"' not in page


@pytest.mark.django_db
def test_the_test_page_and_api_show_each_backends_state(project, api):
    _gaps_with_history(project)
    _keep_history(project, True)
    broken = TestCase.objects.get(project=project, key=A[0])
    lines = {
        line.backend: line
        for line in result_reads.testcase_page(project=project, test=broken).lines
    }
    assert lines["tpu"].history.state == "broken" and lines["cpu"].history is None
    assert lines["tpu"].history.since == HOURS[1] and lines["tpu"].history.since_commit == "c1"
    body = api.get(f"/api/v1/projects/{project.slug}/tests/{broken.pk}/").json()
    state = body["backends"]["tpu"]["history_state"]
    assert (state["state"], state["since_commit"], state["runs"]) == ("broken", "c1", 4)
    assert body["backends"]["cpu"]["history_state"] is None
    html = Client().get(f"/p/{project.slug}/tests/{broken.pk}/").content.decode()
    assert "failing steadily since 2026-05-01 01:00" in html and "<code>c1</code>" in html
    flaky = TestCase.objects.get(project=project, key=A[1])
    html = Client().get(f"/p/{project.slug}/tests/{flaky.pk}/").content.decode()
    assert "2 flips in 4 runs, 2 failed" in html
    assert 'class="badge history-flaky"' in html  # its gap's triage reads flaky too


@pytest.mark.django_db
def test_the_heatmap_and_file_page_count_the_flaky_gaps(project):
    _gaps_with_history(project)
    _keep_history(project, True)
    cells = file_cell_counts(project=project, names=["cpu", "tpu"])
    assert cells["test/test_a.py"]["tpu"]["flaky"] == 1
    assert cells["test/test_a.py"]["cpu"]["flaky"] == 0
    assert file_grid(project=project, file="test/test_a.py").flaky == {"tpu": 1}
    html = Client().get(f"/p/{project.slug}/").content.decode()
    assert 'data-flaky="1"' in html and ">~1</span>" in html
    assert "1 of its gaps is flaky" in html
    html = Client().get(f"/p/{project.slug}/file/?path=test/test_a.py").content.decode()
    assert ">~1</span>" in html


def test_a_cells_hover_text_says_how_many_of_its_gaps_are_flaky():
    cell = HeatCell(backend="tpu", passed=1, failed=3, reference_passed=4, gaps=3, flaky=2)
    assert "2 of its gaps are flaky" in cell.counts_text
    one = HeatCell(backend="tpu", failed=1, reference_passed=1, gaps=1, flaky=1)
    assert "1 of its gaps is flaky" in one.counts_text
    assert "flaky" not in HeatCell(backend="tpu", failed=1, reference_passed=1, gaps=1).counts_text
