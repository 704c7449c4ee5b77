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
        # Colour and label read parity: of the 4 (or 5, 20) tests the reference passes, how many
        # pass on the backend, whatever else it runs or skips.
        ({"passed": 4, "reference_passed": 4}, "6", "4/4"),
        ({"passed": 19, "skipped": 1, "reference_passed": 20, "gaps": 1}, "5", "19/20"),
        ({"passed": 4, "failed": 1, "reference_passed": 5, "gaps": 1}, "4", "4/5"),
        ({"passed": 3, "missing": 2, "reference_passed": 5, "gaps": 2}, "3", "3/5"),
        ({"passed": 2, "error": 3, "reference_passed": 5, "gaps": 3}, "2", "2/5"),
        ({"passed": 1, "skipped": 3, "reference_passed": 4, "gaps": 3}, "1", "1/4"),
        ({"missing": 5, "reference_passed": 5, "gaps": 5}, "0", "missing · 5"),
        # Skips the reference skips too are no gap: full parity.
        ({"passed": 2, "skipped": 6, "reference_passed": 2}, "6", "2/2"),
        # The reference passes none of the row's tests: nothing here is a gap, and it says why.
        ({"passed": 35, "skipped": 2, "reference_tests": 37, "reference_skipped": 37}, "none",
         "ref skips"),
        ({"passed": 2, "reference_tests": 2}, "none", "ref fails"),
        ({"passed": 3, "reference_tests": 3, "reference_skipped": 1}, "none", "ref: 0 pass"),
        ({"passed": 9}, "none", "not on ref"),
        ({}, "none", "–"),
        # The reference's own column: its counts, uncoloured.
        ({"passed": 3, "skipped": 1, "reference_passed": 3, "is_reference": True}, "ref", "3/4"),
    ],
)  # fmt: skip
def test_heat_cell_bins_and_labels(counts, shade, label):
    cell = HeatCell(backend="tpu", **counts)
    assert (cell.shade, cell.label) == (shade, label)
    assert cell.absent == (label == "missing · 5")


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
    cell = CellCounts(backend="tpu", passed=3, missing=1, reference_passed=4, gaps=1)
    row = HeatRow(name="test/a.py", cells=[cell])
    heatmap = Heatmap(
        backends=[], rows=[row], total_rows=1, folders=False, folder="", q="", sort="worst"
    )
    (cell,) = presenters.heatmap_cells(heatmap).rows[0].cells
    assert (cell.backend, cell.passed, cell.missing, cell.parity) == ("tpu", 3, 1, 0.75)
    assert (cell.shade, cell.label, cell.absent) == ("3", "3/4", False)
    assert cell.counts_text == (
        "3 passed, 0 failed, 0 error, 0 skipped, 1 missing; "
        "of the 4 tests the reference passes, 3 pass here (1 gap)"
    )


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


def test_a_sparkline_breaks_where_a_score_is_missing_and_dots_a_lone_point():
    series = {"at": ["d1", "d2", "d3", "d4", "d5"], "score": [0.5, 0.6, None, 0.7, None]}
    line = presenters.sparkline(series, backend="gpu", days=30)
    (stretch,) = line.lines
    # 50 % near the bottom, 70 % near the top (a margin of 15 %); x: the snapshots' order.
    assert stretch == "0.0,27.2 35.0,15.0"
    assert line.dots == [(105.0, 2.8)]
    assert line.title == "score of gpu, last 30 days: 70 % now, 50–70 %"
    assert presenters.sparkline({"at": ["d1"], "score": [None]}, backend="gpu", days=30) is None
    assert presenters.sparkline(None, backend="gpu", days=30) is None


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


def test_a_family_line_names_its_arches_and_the_variants_with_a_run():
    from parity.pure.scores import Counts, scores
    from parity.selectors.families import FamilyFailing, FamilyRollup

    def rollup(failing, *shares):
        return FamilyRollup(
            family="rocm",
            variants=[f"v{n}" for n in range(3)],
            scores=[None if s is None else scores(Counts(passing=s, compared=100)) for s in shares],
            failing=failing,
        )

    every = rollup(FamilyFailing(compared=3, everywhere=12, somewhere=40), 91, 97, 95)
    assert presenters.family_rollup_text(every, ["arch"]) == (
        "3 arches; scores 91–97 %; 12 tests fail on every arch, 40 on some"
    )
    two = rollup(FamilyFailing(compared=2, everywhere=1, somewhere=1), 90, 90, None)
    assert presenters.family_rollup_text(two, ["arch", "rocm"]) == (
        "3 variants; scores 90 %; 1 test fails on every variant of the 2 with a run, 1 on some"
    )
    assert presenters.family_rollup_text(rollup(None, None, None, None), ["os"]) == (
        "3 OSes; no current run"
    )
