"""When the reference moves on and no other backend's run did, only the tests whose outcome
changed on the reference are diffed (``Scope.reference_moved_on``): every gap must still be
what diffing every test gives, which the full rebuild (``project_recompute``) checks."""

import pytest

from parity.engine import project_recompute
from parity.models import Gap, PendingTest, Project, Run
from parity.pure.run_manifest import FileRun
from tests.parity.engine.test_absent_states import manifest_write

A, B, C = "test/test_a.py::TestA::", "test/test_b.py::TestB::", "test/test_c.py::TestC::"
REFERENCE = {f"{A}t{n}": "passed" for n in range(6)} | {f"{B}t{n}": "passed" for n in range(3)}


def _gaps(project: Project) -> set[tuple]:
    return set(
        Gap.objects.filter(project=project).values_list(
            "backend__name", "test__key", "state", "reason__text", "is_open", "closed_run_id"
        )
    )


def _open(project: Project, backend: str) -> dict[str, str]:
    gaps = Gap.objects.filter(project=project, backend__name=backend, is_open=True)
    return dict(gaps.values_list("test__key", "state"))


def _pending(project: Project) -> set[tuple]:
    rows = PendingTest.objects.filter(project=project)
    return set(rows.values_list("backend__name", "test__key", "since"))


def _full_rebuild_changes_nothing(project: Project) -> None:
    before = _gaps(project), _pending(project)
    project_recompute(project=project)
    assert (_gaps(project), _pending(project)) == before


@pytest.mark.django_db
def test_the_reference_moving_on_diffs_its_changed_tests_as_a_full_diff_would(xla, upload_run):
    project = xla
    upload_run("cpu", REFERENCE, day="2026-03-01")
    tpu = {
        f"{A}t0": "passed",
        f"{A}t1": ("skipped", "needs v5e"),
        f"{A}t2": ("failed", "RuntimeError"),
    }
    tpu_run = upload_run("tpu", tpu, day="2026-03-01")  # B's file crashed: no result
    manifest_write(Run.objects.get(pk=tpu_run), FileRun("test/test_b.py", signal="SIGSEGV"))
    gpu = {k: "passed" for k in REFERENCE if k != f"{A}t3"} | {f"{C}t9": "passed"}
    upload_run("gpu", gpu, day="2026-03-01")
    project_recompute(project=project)  # takes the manifest written after the upload
    assert ("tpu", f"{B}t0", "crashed", None, True, None) in _gaps(project)
    assert ("gpu", f"{C}t9", "reference_missing", None, True, None) in _gaps(project)

    # The reference: A's t0 fails (its gaps close), t5 is gone (gpu, whose run is older, still
    # runs it: no reference_missing, the reference dropped it since), B gains a test and C's
    # t9 appears (gpu's reference_missing closes): new since the backends' runs, both are
    # pending on them, not gaps.
    day2 = {k: v for k, v in REFERENCE.items() if k != f"{A}t5"}
    day2 |= {f"{A}t0": ("failed", "RuntimeError"), f"{B}t3": "passed", f"{C}t9": "passed"}
    upload_run("cpu", day2, day="2026-03-02")
    crashed = {f"{B}t{n}": "crashed" for n in range(3)}
    tpu_gaps = {f"{A}t1": "skipped", f"{A}t2": "failed", f"{A}t3": "missing", f"{A}t4": "missing"}
    assert _open(project, "tpu") == tpu_gaps | crashed
    gpu_gaps = {f"{A}t3": "missing"}
    assert _open(project, "gpu") == gpu_gaps
    assert {(b, t) for b, t, _ in _pending(project)} == {
        ("tpu", f"{B}t3"),
        ("tpu", f"{C}t9"),
        ("gpu", f"{B}t3"),
    }
    _full_rebuild_changes_nothing(project)

    # Then A's t0 passes again (no gap: both pass), C's t9 skips there (no gap, nor pending),
    # and B's t1 is gone from the reference (gpu still runs it: dropped since, no gap).
    day3 = {k: v for k, v in day2.items() if k != f"{B}t1"}
    day3 |= {f"{A}t0": "passed", f"{C}t9": ("skipped", "flaky")}
    upload_run("cpu", day3, day="2026-03-03")
    del crashed[f"{B}t1"]
    assert _open(project, "tpu") == tpu_gaps | crashed
    assert _open(project, "gpu") == gpu_gaps
    assert {(b, t) for b, t, _ in _pending(project)} == {("tpu", f"{B}t3"), ("gpu", f"{B}t3")}
    _full_rebuild_changes_nothing(project)

    # The backends run the reference's latest commit as it is: what was pending or dropped
    # is compared now (t5 and B's t1 run only on gpu).
    upload_run("tpu", tpu, day="2026-03-03")
    upload_run("gpu", gpu, day="2026-03-03")
    assert _open(project, "gpu") == gpu_gaps | {
        f"{A}t5": "reference_missing",
        f"{B}t1": "reference_missing",
        f"{B}t3": "missing",
    }
    assert _open(project, "tpu")[f"{B}t3"] == "missing"  # the day-3 run sent no manifest
    assert _pending(project) == set()
    _full_rebuild_changes_nothing(project)


@pytest.mark.django_db
def test_the_references_first_run_diffs_every_test(xla, upload_run):
    # Before the reference's first run no backend has a gap; after it, a test only tpu runs
    # is reference_missing there though it is no change of the reference's.
    tpu_only = "test/test_z.py::TestZ::t1"
    upload_run("tpu", {f"{A}t0": "passed", tpu_only: "passed"}, day="2026-03-01")
    assert _open(xla, "tpu") == {}
    upload_run("cpu", {f"{A}t0": "passed", f"{A}t1": "passed"}, day="2026-03-01")
    assert _open(xla, "tpu") == {tpu_only: "reference_missing", f"{A}t1": "missing"}
    _full_rebuild_changes_nothing(xla)
