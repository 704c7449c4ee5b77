"""Tests the reference passes and a backend's run lacks: the run manifest says why (crashed,
timed out, empty, not run), and only a file it never listed reads ``missing``."""

from ingest.services import run_file_row
from parity.engine.gaps import gaps_diff
from parity.engine.rollups import file_cells_write
from parity.engine.snapshots import snapshots_write
from parity.models import FileCell, Outcome, RunFile, Snapshot
from parity.pure.run_manifest import FileRun
from tests.parity.engine.rows import backend_of, current_set, open_gaps, run_make

P, F = Outcome.PASSED, Outcome.FAILED
FILES = ("segv", "slow", "empty", "lost", "unlisted", "failing")
REF = {f"test/{name}.py::T::t{i}": P for name in FILES for i in (1, 2)}


def manifest_write(run, *entries: FileRun) -> None:
    RunFile.objects.bulk_create(run_file_row(e, run=run) for e in entries)


def test_each_file_gives_its_absent_tests_the_state_of_what_happened_to_it(project):
    cpu_run, tpu_run = run_make(project, "cpu"), run_make(project, "tpu")
    current_set(project, "cpu", REF, run=cpu_run)
    # segv's t1 got a result before the crash (an earlier shard's, say): it keeps its outcome.
    tpu = {"test/segv.py::T::t1": F, "test/failing.py::T::t1": F}
    current_set(project, "tpu", tpu, run=tpu_run)
    manifest_write(
        tpu_run,
        FileRun("test/segv.py", signal="SIGSEGV"),
        FileRun("test/slow.py", timed_out=True, exit_code=-9, signal="SIGKILL"),
        FileRun("test/empty.py", exit_code=5, report=True, tests=0),
        FileRun("test/lost.py", started=False),
        # Exit 1 with a report is a finished run: its absent test is simply not there.
        FileRun("test/failing.py", exit_code=1, report=True, tests=1),
    )
    tpu_backend = backend_of(project, "tpu")
    gaps_diff(
        project=project, backend_ids=[tpu_backend.pk], reference_run_id=cpu_run.pk, cause=tpu_run
    )

    assert open_gaps() == {
        "test/segv.py::T::t1": "failed",
        "test/segv.py::T::t2": "crashed",
        "test/slow.py::T::t1": "timed_out",
        "test/slow.py::T::t2": "timed_out",
        "test/empty.py::T::t1": "empty",
        "test/empty.py::T::t2": "empty",
        "test/lost.py::T::t1": "not_run",
        "test/lost.py::T::t2": "not_run",
        "test/unlisted.py::T::t1": "missing",
        "test/unlisted.py::T::t2": "missing",
        "test/failing.py::T::t1": "failed",
        "test/failing.py::T::t2": "missing",
    }

    # File cells count every absent test where they count missing ones; snapshots count the
    # tests infrastructure lost apart (rerun: crashed, timed out, empty, not run), out of the
    # score, and only the others as missing.
    file_cells_write(project_id=project.pk, backend_ids=[tpu_backend.pk])
    cells = dict(FileCell.objects.filter(backend=tpu_backend).values_list("file", "missing"))
    assert cells == {f"test/{name}.py": 2 for name in FILES} | {
        "test/segv.py": 1,
        "test/failing.py": 1,
    }
    snapshots_write(project=project, backend_ids=[tpu_backend.pk], reference_run_id=cpu_run.pk)
    snapshot = Snapshot.objects.get(backend=tpu_backend)
    assert (snapshot.missing, snapshot.failed, snapshot.rerun) == (3, 2, 7)
    # 12 tests the reference passes, 7 to rerun: 5 compared, none passing.
    assert (snapshot.reference_passing, snapshot.passing, snapshot.score) == (5, 0, 0.0)


def test_a_later_run_that_runs_the_file_closes_its_crashed_gaps(project):
    cpu_run, day1 = run_make(project, "cpu"), run_make(project, "tpu")
    current_set(project, "cpu", REF, run=cpu_run)
    current_set(project, "tpu", {}, run=day1)
    manifest_write(day1, FileRun("test/segv.py", signal="SIGABRT"))
    tpu = backend_of(project, "tpu")
    gaps_diff(project=project, backend_ids=[tpu.pk], reference_run_id=cpu_run.pk, cause=day1)
    assert open_gaps()["test/segv.py::T::t1"] == "crashed"

    day2 = run_make(project, "tpu", day="2026-04-02")
    current_set(project, "tpu", {"test/segv.py::T::t1": P, "test/segv.py::T::t2": P}, run=day2)
    gaps_diff(project=project, backend_ids=[tpu.pk], reference_run_id=cpu_run.pk, cause=day2)
    assert "test/segv.py::T::t1" not in open_gaps()
    assert open_gaps()["test/slow.py::T::t1"] == "missing"  # day2 has no manifest
