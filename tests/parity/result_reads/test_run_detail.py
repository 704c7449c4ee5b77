"""A run's page: its verdict's gaps (opened and closed), its uploads, and what it lacks against
the backend's run before it, grouped by the shard that ran them; for a run that is not current
too, at a fixed number of queries whatever the run's size."""

import pytest

from parity.models import Run
from parity.result_reads import run_detail, run_verdict

A, B, C = "test/a.py", "test/b.py", "test/c.py"
DAY1, DAY2 = "2026-04-01", "2026-04-02"


def cases(file: str, count: int, outcome="passed") -> dict:
    cls = "T" + file[-4].upper()
    return {f"{file}::{cls}::test_{n}": outcome for n in range(count)}


def shards(upload_run, backend: str, parts: dict[str, dict], *, day: str, **kw) -> int:
    """One run sent as one upload per shard, named ``<shard>.xml``; the last completes it."""
    names = list(parts)
    run = None
    for name in names:
        run = upload_run(
            backend, parts[name], day=day, name=f"{name}.xml", complete=name == names[-1], **kw
        )
    return run


def detail(run_id: int):
    return run_detail(run=Run.objects.select_related("backend", "project").get(pk=run_id))


@pytest.fixture
def baseline(upload_run):
    """cpu (the reference) passes everything; tpu's day-1 run passes it all, in two shards."""
    everything = {**cases(A, 4), **cases(B, 3), **cases(C, 2)}
    upload_run("cpu", everything, day=DAY1)
    return shards(
        upload_run,
        "tpu",
        {"xla_op1": cases(A, 4), "xla_op2": {**cases(B, 3), **cases(C, 2)}},
        day=DAY1,
    )


def test_a_run_missing_a_shard_lists_its_files_and_the_gaps_it_opens(baseline, upload_run):
    skipped = {f"{A}::TA::test_0": ("skipped", "not on tpu")}
    run = upload_run("tpu", {**cases(A, 4), **skipped}, day=DAY2, name="xla_op1.xml")

    page = detail(run)
    assert page.baseline_run == baseline and page.is_current
    assert [(s.label, s.file_count, s.tests) for s in page.missing] == [("xla_op2.xml", 2, 5)]
    assert [(f.file, f.tests) for f in page.missing[0].files] == [(B, 3), (C, 2)]
    opened = {(g.test, g.state) for g in page.verdict.gaps}
    assert opened == {(f"{A}::TA::test_0", "skipped")} | {
        (test, "missing") for test in {**cases(B, 3), **cases(C, 2)}
    }
    assert page.verdict.gaps == run_verdict(run=Run.objects.get(pk=run)).gaps
    assert [u.label for u in page.uploads] == ["xla_op1.xml"]
    assert page.uploads[0].counts["total"] == 4


def test_a_pull_requests_run_shows_the_gaps_it_would_open_and_close(upload_run):
    upload_run("cpu", cases(A, 3), day=DAY1)
    upload_run("tpu", {**cases(A, 2), f"{A}::TA::test_2": ("failed", "boom")}, day=DAY1)
    pr = upload_run(
        "tpu",
        {**cases(A, 1), f"{A}::TA::test_1": ("skipped", "flaky"), f"{A}::TA::test_2": "passed"},
        day=DAY2,
        branch="feature",
    )

    page = detail(pr)
    assert not page.is_current
    assert [(g.test, g.state, g.reason) for g in page.verdict.gaps] == [
        (f"{A}::TA::test_1", "skipped", "flaky")
    ]
    assert [(g.test, g.was, g.reason) for g in page.closed] == [
        (f"{A}::TA::test_2", "failed", "boom")
    ]
    assert page.missing == []


def test_a_first_run_has_nothing_to_lack(upload_run):
    upload_run("cpu", cases(A, 2), day=DAY1)
    page = detail(upload_run("tpu", cases(A, 1), day=DAY1))
    assert (page.baseline_run, page.missing, page.closed) == (None, [], [])
    assert [g.test for g in page.verdict.gaps] == [f"{A}::TA::test_1"]


@pytest.mark.parametrize("size", [5, 200])
def test_the_page_reads_a_fixed_number_of_queries(upload_run, django_assert_num_queries, size):
    """The run's size changes no count: results are read set-wise by the (run, test) index."""
    upload_run("cpu", {**cases(A, size), **cases(B, size)}, day=DAY1)
    shards(upload_run, "tpu", {"s1": cases(A, size), "s2": cases(B, size)}, day=DAY1)
    run = upload_run("tpu", {**cases(A, size - 1), f"{A}::TA::test_0": ("skipped", "x")}, day=DAY2)
    run = Run.objects.select_related("backend", "project").get(pk=run)

    # The verdict's 9 (baseline, conditioned triages, hash joins, one statement for the gaps
    # opened, the counts, the gaps closed and what it lacks, reasons, their issues, how its
    # files ran, its failed uploads, the suites its uploads name: none) and 2 for the
    # uncovered (removals since the baseline, triages expired since: none); the baseline's
    # upload files; current; uploads, their files.
    with django_assert_num_queries(15):
        page = run_detail(run=run)
    assert (page.missing_tests, len(page.verdict.gaps)) == (size + 1, size + 2)


def test_the_reference_backends_run_is_judged_against_its_own_run_before(upload_run):
    upload_run("cpu", cases(A, 3), day=DAY1)
    run = upload_run("cpu", {**cases(A, 2), f"{A}::TA::test_2": ("failed", "boom")}, day=DAY2)

    page = detail(run)
    assert [(g.test, g.state) for g in page.verdict.gaps] == [(f"{A}::TA::test_2", "failed")]
    assert (page.closed, page.missing) == ([], [])
