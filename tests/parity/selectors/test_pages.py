"""The pages' selectors (``parity.selectors``): a fixed number of queries each, whatever the
history, and their pure parts (carried trend counts)."""

import datetime

import pytest

from parity import result_reads, selectors
from parity.models import Project, Reason, ReasonDaily
from tests.parity.dashboard_scenario import (
    BACKENDS,
    CUDA,
    DAY1,
    DAY2,
    ISSUE_URL,
    WITH_ISSUE,
    A,
    B,
    C,
    tid,
    upload_history,
)


@pytest.fixture
def xla_runs(upload_run, xla) -> Project:
    upload_history(upload_run)
    return xla


def test_project_cards_in_three_queries(xla_runs, django_assert_num_queries):
    with django_assert_num_queries(3):
        (card,) = selectors.project_cards()
    assert [b.name for b in card.backends] == list(BACKENDS)
    assert [b.score for b in card.backends] == [1.0, 0.8, 0.6, 0.8]
    assert card.untracked == 7 and card.has_uploads


def test_heatmap_in_four_queries(xla_runs, django_assert_num_queries):
    with django_assert_num_queries(4):
        heatmap = selectors.heatmap(project=xla_runs, query=selectors.HeatmapQuery(sort="neuron"))
    assert [row.name for row in heatmap.rows] == [B, A, C]
    assert [b.backend for b in heatmap.backends] == list(BACKENDS)


def test_file_grid_in_nine_queries(xla_runs, django_assert_num_queries):
    with django_assert_num_queries(9):
        grid = selectors.file_grid(project=xla_runs, file=A, backend="tpu")
    assert grid.counts[0] == ("passed", [4, 3, 4, 2])
    assert [(r.reason.text, r.outcome, r.count) for r in grid.reasons][0][2] == 1


def test_skip_reason_chart_and_runs_page_query_counts(xla_runs, django_assert_num_queries):
    with django_assert_num_queries(3):  # no backend ran before the window
        chart = selectors.skip_reason_chart(project=xla_runs, days=28, top=2)
    assert [s.name for s in chart.series] == [CUDA, chart.series[1].name, "other (2 reasons)"]
    # the page's ids, runs, their uploads, current runs, baselines' uploads; gaps opened,
    # closed, unrun files
    with django_assert_num_queries(8):
        page = selectors.runs_page(project=xla_runs, per_page=5)
    assert len(page.rows) == 5 and page.has_next
    with django_assert_num_queries(2):  # projects, each day's last snapshot
        trends = selectors.score_trends(since=datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC))
    assert len(trends["pytorch-xla"]["cpu"]["score"]) == 2


def test_skip_reason_chart_carries_a_backends_counts_until_its_next_run(
    xla, django_assert_num_queries
):
    """A backend's count on a day is its latest ReasonDaily day's, also from before the window;
    an explicit 0 ends a reason."""
    cpu, tpu = (xla.backends.get(name=n) for n in ("cpu", "tpu"))
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    reason = Reason.objects.create(
        project=xla, text="r", fingerprint="r", first_seen=now, last_seen=now
    )
    day = datetime.date(2026, 1, 10)
    for backend, offset, count in [(cpu, -5, 3), (cpu, 2, 0), (tpu, 1, 2)]:
        ReasonDaily.objects.create(
            project=xla,
            reason=reason,
            backend=backend,
            day=day + datetime.timedelta(days=offset),
            count=count,
        )
    with django_assert_num_queries(4):  # cpu's counts of day 5 start the window
        chart = selectors.skip_reason_chart(project=xla, days=4, today=day + datetime.timedelta(3))
    assert chart.days[0] == day
    (series,) = chart.series
    # day 10: cpu 3 (from day 5); day 11: + tpu 2; day 12: cpu 0; day 13: tpu 2 carried.
    assert series.counts == [3, 5, 2, 2]
    only_tpu = selectors.skip_reason_chart(
        project=xla, backend="tpu", days=4, today=day + datetime.timedelta(3)
    )
    # tpu's history starts on day 11: so does its chart (no ramp from a day with no data).
    assert only_tpu.days[0] == day + datetime.timedelta(1)
    assert only_tpu.series[0].counts == [2, 2, 2]


def test_a_one_day_projects_skip_chart_starts_on_that_day(xla):
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    reason = Reason.objects.create(
        project=xla, text="r", fingerprint="r", first_seen=now, last_seen=now
    )
    day = datetime.date(2026, 1, 10)
    tpu = xla.backends.get(name="tpu")
    ReasonDaily.objects.create(project=xla, reason=reason, backend=tpu, day=day, count=7)

    chart = selectors.skip_reason_chart(project=xla, days=28, today=day)

    assert chart.days == [day]
    assert [s.counts for s in chart.series] == [[7]]


def test_testcase_page_lines(xla_runs):
    test = xla_runs.tests.get(key=f"{C}::TestC::test_c3")
    page = result_reads.testcase_page(project=xla_runs, test=test)
    by_backend = {line.backend: line for line in page.lines}
    assert list(by_backend) == list(BACKENDS)
    assert by_backend["cpu"].outcome == "skipped" and by_backend["cpu"].reason.text == CUDA
    assert [r.started_at.date().isoformat() for r in by_backend["tpu"].timeline] == [DAY1, DAY2]
    assert by_backend["neuron"].gap is None  # not passing on the reference: no gap


def test_the_test_page_reads_each_table_once(xla_runs, django_assert_num_queries):
    """Backends, the history (results and runs, with reason texts), current outcomes (with
    reasons), open gaps (with reasons and triages), the reasons' issues, its file's owners: 6
    (11 before the page stopped re-reading what the endpoint's selector had read)."""
    test = xla_runs.tests.get(key=tid(A, 2))
    with django_assert_num_queries(6):
        page = result_reads.testcase_page(project=xla_runs, test=test)
    tpu = next(line for line in page.lines if line.backend == "tpu")
    assert tpu.reason.text == WITH_ISSUE and [i.ref for i in tpu.issues] == [ISSUE_URL]
    assert tpu.gap.tracked and [r.reason for r in tpu.timeline] == [WITH_ISSUE, WITH_ISSUE]
    with django_assert_num_queries(4):
        history = result_reads.testcase_history(project=xla_runs, test=test)
    assert list(history.backends) == sorted(BACKENDS)
    assert history.backends["tpu"].gap == "skipped"
    assert [r.outcome for r in history.backends["gpu"].history] == ["failed", "failed"]


def test_the_test_pages_timeline_marks_complete_runs_that_lacked_the_test(upload_run, xla):
    """A coverage drop shows on the test's page: the complete runs of the default branch that
    did not run it are dashes; an incomplete run or another branch's run without it is not a
    drop, and a backend that never had it reads "missing from its runs"."""
    test_x, other = "t.py::TestT::test_x", "t.py::TestT::test_y"
    days = [f"2026-01-0{day}" for day in range(1, 6)]
    for day in days[:1] + days[3:]:
        upload_run("tpu", {test_x: "passed", other: "passed"}, day=day)
    upload_run("tpu", {other: "passed"}, day=days[1])  # the drop
    upload_run("tpu", {other: "passed"}, day=days[2], complete=False)
    upload_run("tpu", {other: "passed"}, day=days[2], branch="pr-1")
    upload_run("gpu", {other: "passed"}, day=days[0])
    test = xla.tests.get(key=test_x)

    page = result_reads.testcase_page(project=xla, test=test)
    by_backend = {line.backend: line for line in page.lines}

    timeline = by_backend["tpu"].timeline
    assert [(r.started_at.date().isoformat(), r.outcome) for r in timeline] == [
        (days[0], "passed"),
        (days[1], "missing"),
        (days[3], "passed"),
        (days[4], "passed"),
    ]
    assert by_backend["gpu"].timeline == []
    # The test endpoint's history lists the runs that had the test, as before.
    history = result_reads.testcase_history(project=xla, test=test)
    assert [r.outcome for r in history.backends["tpu"].history] == ["passed"] * 3


def test_a_tests_history_probes_only_the_backends_last_runs(upload_run, xla, monkeypatch):
    """A backend that has not run the test lately is not searched through its whole history:
    only its last ``HISTORY_PROBES`` runs are, newest first."""
    test_x, other = "t.py::TestT::test_x", "t.py::TestT::test_y"
    upload_run("tpu", {test_x: ("failed", "boom"), other: "passed"}, day="2026-01-01")
    for day in ("2026-01-02", "2026-01-03", "2026-01-04"):
        upload_run("tpu", {test_x: "passed", other: "passed"}, day=day)
    upload_run("tpu", {other: "passed"}, day="2026-01-05")
    test = xla.tests.get(key=test_x)
    history = result_reads.testcase_history(project=xla, test=test)
    assert [r.outcome for r in history.backends["tpu"].history] == ["passed"] * 3 + ["failed"]

    monkeypatch.setattr("parity.result_reads.history.HISTORY_PROBES", 3)
    history = result_reads.testcase_history(project=xla, test=test)
    dates = [r.started_at.date().isoformat() for r in history.backends["tpu"].history]
    assert dates == ["2026-01-04", "2026-01-03"]
