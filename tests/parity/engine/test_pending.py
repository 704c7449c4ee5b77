"""Commit cadence (issue 22, item 2), through the upload API: a test the reference first ran in
a run CI started after a backend's current run is pending there (not yet run there): no gap, no
event, no digest line, no verdict gap, out of the score; a run of the backend at least as new
that still lacks it makes it a gap. A test the reference dropped after the backend's run is no
``reference_missing`` gap either."""

import datetime

from parity.models import Gap, GapEvent, PendingTest, Run, Snapshot
from parity.pure.weeks import Week
from parity.result_reads import run_verdict
from parity.selectors.digest import digest_content
from tests.parity.engine.test_current_runs import open_gaps

URL = "/api/v1/projects/pytorch-xla"
A = "test/test_a.py::TestA::"
NEW = "test/test_new.py::TestNew::"
COMMIT_A = {f"{A}test_1": "passed", f"{A}test_2": "passed"}
COMMIT_B = {**COMMIT_A, f"{NEW}test_1": "passed", f"{NEW}test_2": "passed"}
TPU = {f"{A}test_1": "passed", f"{A}test_2": ("skipped", "not on TPU")}
DAY1, DAY2 = "2026-04-01", "2026-04-02"


def pending(backend: str = "tpu") -> set[str]:
    return set(
        PendingTest.objects.filter(backend__name=backend).values_list("test__key", flat=True)
    )


def digest_tests(project) -> set[str]:
    week = Week.of(datetime.date.fromisoformat(DAY2))
    content = digest_content(project=project, week=week)
    return {row.test for b in content.new_gaps for group in b.groups for row in group.gaps}


def test_a_new_file_is_pending_until_the_backend_runs_that_commit(upload_run, api, xla):
    upload_run("cpu", COMMIT_A, day=DAY1)
    tpu_a = upload_run("tpu", TPU, day=DAY1)
    # The reference runs commit B, which adds a file; TPU's current run is still commit A.
    cpu_b = upload_run("cpu", COMMIT_B, day=DAY2)

    assert open_gaps() == {f"{A}test_2": "skipped"}
    assert pending() == {f"{NEW}test_1", f"{NEW}test_2"}
    assert not Gap.objects.filter(opened_run_id=cpu_b).exists()
    assert not GapEvent.objects.filter(run_id=cpu_b).exists()
    assert not any("test_new" in t for t in digest_tests(xla))
    verdict = run_verdict(run=Run.objects.get(pk=tpu_a))
    assert [g.state for g in verdict.gaps] == ["skipped"]
    # Numbers: the pending tests are neither gaps nor compared.
    tpu = {b["backend"]: b for b in api.get(f"{URL}/parity/").json()["backends"]}["tpu"]
    assert (tpu["score"], tpu["passing"], tpu["reference_passing"], tpu["pending"]) == (
        0.5,
        1,
        2,
        2,
    )
    assert tpu["gaps"]["missing"] == 0
    gaps = api.get(f"{URL}/gaps/?backend=tpu").json()
    assert [g["test"] for g in gaps["results"]] == [f"{A}test_2"]
    cells = {f["file"]: f["cells"]["tpu"] for f in api.get(f"{URL}/parity/").json()["files"]}
    assert (cells["test/test_new.py"]["pending"], cells["test/test_new.py"]["missing"]) == (2, 0)

    # TPU runs commit B (as new as the reference's run) without the file: now they are gaps,
    # opened by TPU's run, and new in the digest.
    tpu_b = upload_run("tpu", TPU, day=DAY2)

    assert open_gaps() == {
        f"{A}test_2": "skipped",
        f"{NEW}test_1": "missing",
        f"{NEW}test_2": "missing",
    }
    assert pending() == set()
    opened = Gap.objects.filter(opened_run_id=tpu_b)
    assert sorted(opened.values_list("test__key", flat=True)) == [
        f"{NEW}test_1",
        f"{NEW}test_2",
    ]
    assert sum("test_new" in t for t in digest_tests(xla)) == 2
    snapshot = Snapshot.objects.get(run_id=tpu_b)
    assert (snapshot.missing, snapshot.pending, snapshot.reference_passing) == (2, 0, 4)
    verdict = run_verdict(run=Run.objects.get(pk=tpu_b))
    assert sorted(g.test for g in verdict.gaps if g.state == "missing") == [
        f"{NEW}test_1",
        f"{NEW}test_2",
    ]


def test_per_commit_runs_compare_by_when_ci_ran_them(upload_run):
    upload_run("cpu", COMMIT_A, day=DAY1, commit="c1" * 20, time="10:00")
    upload_run("tpu", TPU, day=DAY1, commit="c1" * 20, time="10:20")
    # c2 adds a test; TPU's c1 run is older: pending. A TPU run started before the reference's
    # c2 run but completing after it changes nothing.
    upload_run(
        "cpu", {**COMMIT_A, f"{A}test_3": "passed"}, day=DAY1, commit="c2" * 20, time="11:00"
    )
    assert pending() == {f"{A}test_3"}

    # TPU's c2 run has the test, failing: a real gap however new the test is.
    upload_run(
        "tpu",
        {**TPU, f"{A}test_3": ("failed", "boom")},
        day=DAY1,
        commit="c2" * 20,
        time="11:20",
    )
    assert open_gaps() == {f"{A}test_2": "skipped", f"{A}test_3": "failed"}
    assert pending() == set()


def test_a_test_the_reference_dropped_after_the_backend_ran_is_no_reference_missing_gap(
    upload_run,
):
    old = f"{A}test_old"
    upload_run("cpu", {**COMMIT_A, old: "passed"}, day=DAY1)
    upload_run("tpu", {**TPU, old: "passed"}, day=DAY1)
    # The reference's next run no longer has it (deleted upstream); TPU ran the older commit.
    upload_run("cpu", COMMIT_A, day=DAY2)
    assert open_gaps() == {f"{A}test_2": "skipped"}

    # TPU's run of the new commit still has it: now it runs only on TPU.
    upload_run("tpu", {**TPU, old: "passed"}, day=DAY2)
    assert open_gaps() == {f"{A}test_2": "skipped", old: "reference_missing"}


def test_a_test_only_the_backend_has_stays_reference_missing(upload_run):
    mine = f"{A}test_tpu_only"
    upload_run("cpu", COMMIT_A, day=DAY1)
    upload_run("tpu", {**TPU, mine: "passed"}, day=DAY1)
    upload_run("cpu", COMMIT_A, day=DAY2)
    assert open_gaps()[mine] == "reference_missing"
