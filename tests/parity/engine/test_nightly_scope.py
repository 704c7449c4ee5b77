"""A backend's nightly (its new run replacing the one its gaps were diffed against, the
reference staying) diffs only the tests that can change (``gaps._NIGHTLY_SCOPE_SQL``): every
gap, event, pending test and file cell must still be what a full rebuild (``project_recompute``)
gives. Random sequences of runs exercise each part of that scope: outcomes flipping, files
dropped and returning, manifests naming crashed or unstarted files, tests the reference adds
(pending on a backend whose run is older) or drops (no gap on a backend whose run is older),
runs starting before or after the reference's. A late shard of a backend's current run (or a
retried task) diffs only what the shard brought (``gaps._RERUN_SCOPE_SQL``), held to the same
rebuild, and the heatmap's gap counts (``FileGapCount``) to the open gaps after each run."""

import datetime
import random

import pytest
from django.db import connection

from parity.engine import parity_recompute, project_recompute
from parity.models import FileCell, Gap, GapEvent, Outcome, PendingTest, Project, Run, RunFile
from parity.pure.run_manifest import FileRun
from tests.parity.engine.rows import results_upload, run_at
from tests.parity.engine.test_absent_states import manifest_write
from tests.parity.engine.test_file_gap_counts import assert_counts_true

FILES = [f"test/test_{f}.py" for f in "abcde"]
TESTS = [f"{file}::T::t{n}" for file in FILES for n in range(4)]
MANIFEST_ENTRIES = (
    lambda file: FileRun(file, signal="SIGSEGV"),
    lambda file: FileRun(file, timed_out=True, exit_code=-9, signal="SIGKILL"),
    lambda file: FileRun(file, exit_code=5, report=True, tests=0),
    lambda file: FileRun(file, started=False),
    lambda file: FileRun(file, exit_code=1, report=True, tests=1),  # ran
)
START = datetime.datetime(2026, 5, 1, tzinfo=datetime.UTC)


def _tables(project: Project) -> tuple:
    gaps = Gap.objects.filter(project=project).values_list(
        "backend__name",
        "test__key",
        "state",
        "reason__text",
        "is_open",
        "opened_run_id",
        "closed_run_id",
    )
    events = GapEvent.objects.filter(project=project).values_list(
        "backend__name", "gap__test__key", "from_state", "to_state", "run_id"
    )
    pending = PendingTest.objects.filter(project=project).values_list(
        "backend__name", "test__key", "since"
    )
    cells = FileCell.objects.filter(project=project).values_list(
        "backend__name", "file", "passed", "failed", "error", "skipped", "missing"
    )
    return tuple(sorted(map(repr, rows)) for rows in (gaps, events, pending, cells))


def _results(rng: random.Random, *, reference: bool) -> dict:
    """A run's results: some files left out whole, some tests of a file missing (added or
    removed since), the rest passing, skipped for one of two reasons or failing."""
    results = {}
    for file in FILES:
        if rng.random() < (0.1 if reference else 0.3):
            continue
        for test in TESTS:
            if not test.startswith(file) or rng.random() < 0.15:
                continue
            roll = rng.random()
            if roll < (0.7 if reference else 0.5):
                results[test] = Outcome.PASSED
            elif roll < 0.8:
                results[test] = (Outcome.SKIPPED, rng.choice(("no fp64", "no sparse")))
            elif roll < 0.95:
                results[test] = (Outcome.FAILED, "RuntimeError")
            else:
                results[test] = Outcome.ERROR
    return results


def _run_write(project: Project, backend: str, at: datetime.datetime, rng, n: int) -> Run:
    run = run_at(project, backend, at, name=str(n))
    results = _results(rng, reference=backend == "cpu")
    if results:
        results_upload(run, results)
    if backend != "cpu" and rng.random() < 0.7:
        files = rng.sample(FILES, rng.randint(1, 3))
        manifest_write(run, *(rng.choice(MANIFEST_ENTRIES)(file) for file in files))
    return run


def _late_shard(run: Run, rng) -> None:
    """Another shard of ``run``, uploaded after its recompute: a few results (tests new to the
    run, or again), and files of its manifest added or moved to another state (the ingest's
    merge: a file some shard started wins over a list that only expected it)."""
    results = sorted(_results(rng, reference=False).items())
    if results:
        results_upload(run, dict(rng.sample(results, min(len(results), rng.randint(1, 6)))))
    listed = sorted(RunFile.objects.filter(run=run).values_list("file", flat=True))
    for file in {rng.choice(listed or FILES), rng.choice(FILES)}:  # a listed file moves more
        RunFile.objects.filter(run=run, file=file).delete()
        manifest_write(run, rng.choice(MANIFEST_ENTRIES)(file))


def _nightlies(seed: int, steps: int) -> None:
    rng = random.Random(seed)
    project = Project.objects.get(slug="pytorch-xla")
    latest, current = {}, {}
    for n in range(steps):
        backend = rng.choice(("cpu", "cpu", "gpu", "tpu", "tpu"))
        if backend in current and rng.random() < 0.3:
            run = current[backend]
            _late_shard(run, rng)
            parity_recompute(run=run)
            assert_counts_true(project)
            after = _tables(project)
            project_recompute(project=project)
            assert _tables(project) == after, f"seed {seed}, step {n}: late shard of {run.pk}"
            assert_counts_true(project)
            continue
        # The reference now and then; a backend's run started a few hours either side of the
        # reference's latest, so tests are pending on it or dropped since its run started.
        at = START + datetime.timedelta(hours=6 * n + rng.choice((-5, -1, 0, 1, 3)))
        at = max(at, latest.get(backend, at) + datetime.timedelta(minutes=1))
        latest[backend] = at
        run = current[backend] = _run_write(project, backend, at, rng, n)
        parity_recompute(run=run)
        assert_counts_true(project)
        after = _tables(project)
        project_recompute(project=project)
        assert _tables(project) == after, f"seed {seed}, step {n}: {backend}'s run {run.pk}"
        assert_counts_true(project)


@pytest.mark.django_db
@pytest.mark.parametrize("seed", range(6))
def test_a_backends_nightly_diffs_what_a_full_rebuild_would(project, seed):
    _nightlies(seed, steps=24)


def _temp_count(table: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table}")  # noqa: S608 (a name of ours)
        return cursor.fetchone()[0]


@pytest.mark.django_db
def test_a_nightly_diffs_its_changed_tests_not_every_test(project):
    # The temporary tables live until the test's transaction ends: what the last diff covered.
    reference = {f"test/test_a.py::T::t{n}": Outcome.PASSED for n in range(20)}
    cpu = run_at(project, "cpu", START)
    results_upload(cpu, reference)
    parity_recompute(run=cpu)
    first = run_at(project, "tpu", START + datetime.timedelta(hours=1))
    results_upload(first, dict(list(reference.items())[:10]))  # t10-t19 missing
    parity_recompute(run=first)
    assert _temp_count("parity_desired") == 10  # every test: the backend's first run

    tonight = dict(list(reference.items())[:10]) | {"test/test_a.py::T::t3": Outcome.FAILED}
    nightly = run_at(project, "tpu", START + datetime.timedelta(days=1))
    results_upload(nightly, tonight)
    parity_recompute(run=nightly)
    assert _temp_count("parity_diff_scope") == 1
    assert _temp_count("parity_desired") == 1  # t3 failing; the 10 missing not diffed again
    assert Gap.objects.filter(is_open=True).count() == 11


@pytest.mark.django_db
def test_a_late_shard_diffs_what_it_brought_not_every_test(project):
    reference = {f"test/test_a.py::T::t{n}": Outcome.PASSED for n in range(20)}
    results_upload(cpu := run_at(project, "cpu", START), reference)
    parity_recompute(run=cpu)
    tpu = run_at(project, "tpu", START + datetime.timedelta(hours=1))
    results_upload(tpu, dict(list(reference.items())[:10]))  # t10-t19 missing
    manifest_write(tpu, FileRun("test/test_b.py", signal="SIGSEGV"))
    parity_recompute(run=tpu)
    assert Gap.objects.filter(is_open=True).count() == 10

    results_upload(tpu, {"test/test_a.py::T::t10": Outcome.PASSED})  # the shard of t10
    parity_recompute(run=tpu)
    # t10, and test_b's tests (none): the 9 missing were not diffed again.
    assert _temp_count("parity_diff_scope") == 1
    assert Gap.objects.filter(is_open=True).count() == 9


@pytest.mark.django_db
def test_a_late_shard_that_ran_a_crashed_file_moves_its_gaps_to_missing(project):
    a = [f"test/test_a.py::T::t{n}" for n in range(3)]
    results_upload(cpu := run_at(project, "cpu", START), dict.fromkeys(a, Outcome.PASSED))
    parity_recompute(run=cpu)
    tpu = run_at(project, "tpu", START + datetime.timedelta(hours=1))
    results_upload(tpu, {a[0]: Outcome.PASSED})
    manifest_write(tpu, FileRun("test/test_a.py", signal="SIGSEGV"))
    parity_recompute(run=tpu)
    assert set(Gap.objects.filter(is_open=True).values_list("state", flat=True)) == {"crashed"}

    # A retried shard ran the file to its end: t1 passes, t2 was not in it.
    RunFile.objects.filter(run=tpu).delete()
    manifest_write(tpu, FileRun("test/test_a.py", exit_code=0, report=True, tests=2))
    results_upload(tpu, {a[1]: Outcome.PASSED})
    parity_recompute(run=tpu)
    gaps = dict(Gap.objects.filter(is_open=True).values_list("test__key", "state"))
    assert gaps == {a[2]: "missing"}


def _cells(project: Project, backend: str) -> dict[str, tuple]:
    cells = FileCell.objects.filter(project=project, backend__name=backend)
    return {
        c.file: (c.passed, c.failed, c.error, c.skipped, c.missing) for c in cells.order_by("file")
    }


def _two_files_nightly(project: Project) -> tuple[Run, dict]:
    """The reference passes 2 files of 5 tests; tpu's first run lacks b's t4; returns tpu's
    next run (unrecomputed) and its results: a's t0 fails now."""
    keys = [f"test/test_{f}.py::T::t{n}" for f in "ab" for n in range(5)]
    cpu = run_at(project, "cpu", START)
    results_upload(cpu, dict.fromkeys(keys, Outcome.PASSED))
    parity_recompute(run=cpu)
    first = run_at(project, "tpu", START + datetime.timedelta(hours=1))
    results_upload(first, dict.fromkeys(keys[:-1], Outcome.PASSED))
    parity_recompute(run=first)
    nightly = run_at(project, "tpu", START + datetime.timedelta(days=1))
    tonight = dict.fromkeys(keys[:-1], Outcome.PASSED) | {keys[0]: Outcome.FAILED}
    return nightly, tonight


@pytest.mark.django_db
def test_a_nightlys_file_cells_move_by_its_changes(project):
    nightly, tonight = _two_files_nightly(project)
    assert _cells(project, "tpu") == {
        "test/test_a.py": (5, 0, 0, 0, 0),
        "test/test_b.py": (4, 0, 0, 0, 1),
    }
    results_upload(nightly, tonight)
    parity_recompute(run=nightly)
    assert _cells(project, "tpu") == {
        "test/test_a.py": (4, 1, 0, 0, 0),
        "test/test_b.py": (4, 0, 0, 0, 1),
    }
    assert _temp_count("parity_cell_deltas") == 1  # a's: b's cell was not counted again


@pytest.mark.django_db
def test_file_cells_that_drifted_are_recounted_not_failed(project):
    nightly, tonight = _two_files_nightly(project)
    # Cells that are not what a recount gives: a's passed count would go below zero.
    FileCell.objects.filter(backend__name="tpu", file="test/test_a.py").update(passed=0)
    results_upload(nightly, tonight)
    parity_recompute(run=nightly)
    assert _cells(project, "tpu")["test/test_a.py"] == (4, 1, 0, 0, 0)


@pytest.mark.django_db
def test_a_nightly_reads_the_manifest_of_its_scoped_tests_only(project):
    # Both of tpu's runs say b's file never started: its 5 tests stay not_run gaps without
    # being looked up again. Tonight a's file crashes after t0 failed: a's tests are.
    a = [f"test/test_a.py::T::t{n}" for n in range(5)]
    b = [f"test/test_b.py::T::t{n}" for n in range(5)]
    cpu = run_at(project, "cpu", START)
    results_upload(cpu, dict.fromkeys(a + b, Outcome.PASSED))
    parity_recompute(run=cpu)
    not_started = FileRun("test/test_b.py", started=False)
    first = run_at(project, "tpu", START + datetime.timedelta(hours=1))
    results_upload(first, dict.fromkeys(a, Outcome.PASSED))
    manifest_write(first, not_started)
    parity_recompute(run=first)
    nightly = run_at(project, "tpu", START + datetime.timedelta(days=1))
    results_upload(nightly, {a[0]: Outcome.FAILED})
    manifest_write(nightly, not_started, FileRun("test/test_a.py", signal="SIGSEGV"))
    parity_recompute(run=nightly)
    gaps = dict(Gap.objects.filter(is_open=True).values_list("test__key", "state"))
    assert gaps == {a[0]: "failed"} | dict.fromkeys(a[1:], "crashed") | dict.fromkeys(b, "not_run")
    assert _temp_count("parity_absent") == 5  # a's tests: b's were not looked up
