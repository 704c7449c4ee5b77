"""How the dashboard shows the selectors' answers (``parity.dashboard.presenters``): colour
bins, labels and issue names."""

import datetime

import pytest

from parity import selectors
from parity.dashboard import presenters
from parity.dashboard.presenters import HeatCell
from parity.selectors import IssueInfo
from parity.selectors.heatmap import CellCounts, Heatmap, HeatRow


@pytest.mark.parametrize(
    ("counts", "shade", "label"),
    [
        ({"passed": 4}, "6", "4/4"),
        ({"passed": 19, "skipped": 1}, "5", "19/20"),
        ({"passed": 4, "failed": 1}, "4", "4/5"),
        ({"passed": 3, "missing": 2}, "3", "3/5"),
        ({"passed": 2, "error": 3}, "2", "2/5"),
        ({"passed": 1, "skipped": 3}, "1", "1/4"),
        ({"missing": 5}, "0", "missing · 5"),
        ({}, "none", "–"),
    ],
)
def test_heat_cell_bins_and_labels(counts, shade, label):
    cell = HeatCell(backend="tpu", **counts)
    assert (cell.shade, cell.label) == (shade, label)
    assert cell.absent == (counts == {"missing": 5})


@pytest.mark.parametrize(
    ("given", "label", "url"),
    [
        ("https://github.com/pytorch/xla/issues/4298", "pytorch/xla#4298", None),
        ("https://github.com/pytorch/pytorch/pull/91199", "pytorch/pytorch#91199", None),
        ("https://b.corp.example/issues/123", "b.corp.example/issues/123", None),
        ("b/123456", "b/123456", ""),
    ],
)
def test_issue_labels(given, label, url):
    link = presenters.issue_link(given)
    assert (link.label, link.url) == (label, given if url is None else url)


def test_outcome_symbols_for_readers_who_cannot_tell_colours_apart():
    symbols = [presenters.outcome_symbol(o) for o in ("passed", "failed", "error", "skipped", None)]
    assert symbols == ["✓", "✗", "!", "⊘", "–"]


def test_heatmap_cells_keep_the_counts_and_add_how_they_look():
    row = HeatRow(name="test/a.py", cells=[CellCounts(backend="tpu", passed=3, missing=1)])
    heatmap = Heatmap(
        backends=[], rows=[row], total_rows=1, folders=False, folder="", q="", sort="worst"
    )
    (cell,) = presenters.heatmap_cells(heatmap).rows[0].cells
    assert (cell.backend, cell.passed, cell.missing, cell.share) == ("tpu", 3, 1, 0.75)
    assert (cell.shade, cell.label, cell.absent) == ("3", "3/4", False)
    assert cell.counts_text == "3 passed, 0 failed, 0 error, 0 skipped, 1 missing"


@pytest.mark.parametrize(
    ("seconds", "text"), [(0.04, "< 0.1 s"), (0.34, "0.3 s"), (9.94, "9.9 s"), (42.4, "42 s"),
                          (119.4, "119 s"), (169.0, "3 min"), (3600.0, "60 min")],
)  # fmt: skip
def test_durations_read_as_precisely_as_needed(seconds, text):
    assert presenters.duration(seconds) == text


def test_pattern_scope_says_whether_whole_files_are_left_out():
    assert presenters.pattern_scope("test/spmd/**") == "every test of the matching files"
    assert presenters.pattern_scope("test/a.py::T::test_*") == "matching tests"


@pytest.mark.parametrize(
    ("issue", "label", "state"),
    [
        (
            IssueInfo(
                "#9017",
                "https://github.com/pytorch/xla/issues/9017",
                "XLA does not support complex64",
                "open",
            ),
            "#9017 XLA does not support complex64 (open)",
            "open",
        ),
        (
            IssueInfo(
                "pytorch/xla#1", "https://github.com/pytorch/xla/issues/1", "x" * 80, "closed"
            ),
            "pytorch/xla#1 " + "x" * 59 + "… (closed)",
            "closed",
        ),
        # Never read from its tracker: the number alone, as before titles existed.
        (IssueInfo("b/123456", "", "", "unknown"), "b/123456", "unknown"),
    ],
)
def test_an_issue_reads_with_its_title_and_state(issue, label, state):
    link = presenters.issue_link(issue)
    assert (link.label, link.url, link.state, link.title) == (label, issue.url, state, issue.title)


# --- The burn-down --------------------------------------------------------------------------


def test_the_burndown_draws_each_backend_on_a_shared_day_axis():
    day = datetime.date(2026, 11, 1)
    later = day + datetime.timedelta(days=4)
    burndown = selectors.BurnDown(
        days=[day, later], series={"tpu": [(day, 10), (later, 0)], "gpu": [(later, 5)]}
    )
    chart = presenters.burndown_chart(burndown)
    assert chart.top == 10 and (chart.first_day, chart.last_day) == ("2026-11-01", "2026-11-05")
    (gpu, tpu) = chart.lines
    plot = chart.plot
    assert (
        tpu.points
        == f"{plot['left']:.1f},{plot['top']:.1f} {plot['right']:.1f},{plot['bottom']:.1f}"
    )
    assert gpu.points == f"{plot['right']:.1f},{(plot['top'] + plot['bottom']) / 2:.1f}"
    assert (gpu.last, tpu.last) == (5, 0) and gpu.colour != tpu.colour
    # One day (or no snapshot) draws nothing: no trend yet.
    assert (
        presenters.burndown_chart(selectors.BurnDown(days=[day], series={"tpu": [(day, 3)]}))
        is None
    )
    assert presenters.burndown_chart(None) is None
