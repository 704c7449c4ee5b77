"""The snapshot step alone: numbers of each backend's current run from current outcomes and
open gaps (made with the ORM), upserted and pointed to by its BackendState."""

from parity.engine.snapshots import snapshots_write
from parity.models import BackendState, Gap, Outcome, Snapshot
from tests.parity.engine.rows import backend_of, current_set, gap_open, reason_of, run_make

A = "test/a.py::TestA::"
P, S, F = Outcome.PASSED, Outcome.SKIPPED, Outcome.FAILED


def write(project, reference_run) -> Snapshot:
    tpu = backend_of(project, "tpu")
    snapshots_write(
        project=project,
        backend_ids=[tpu.pk],
        reference_run_id=reference_run.pk if reference_run else None,
    )
    state = BackendState.objects.get(backend=tpu)
    return Snapshot.objects.get(pk=state.snapshot_id)


def test_a_snapshot_counts_the_current_run_against_the_reference(project):
    cpu_run, tpu_run = run_make(project, "cpu"), run_make(project, "tpu")
    current_set(project, "cpu", {f"{A}t{n}": P for n in range(1, 5)}, run=cpu_run)
    current_set(
        project, "tpu", {f"{A}t1": P, f"{A}t2": F, f"{A}t3": (S, "x"), f"{A}t9": P}, run=tpu_run
    )
    gap_open(project, "tpu", f"{A}t2", "failed", run=tpu_run)
    gap_open(project, "tpu", f"{A}t3", "skipped", run=tpu_run)
    gap_open(project, "tpu", f"{A}t4", "missing", run=tpu_run)
    gap_open(project, "tpu", f"{A}t9", "reference_missing", run=tpu_run)
    Gap.objects.filter(test__name="t2").update(tracked=True)
    Gap.objects.filter(test__name="t3").update(intended=True)
    Gap.objects.filter(test__name="t9").update(tracked=True)  # outside the score: not counted

    snapshot = write(project, cpu_run)

    numbers = (
        snapshot.run_id,
        snapshot.reference_run_id,
        snapshot.at,
        snapshot.score,
        snapshot.passing,
        snapshot.reference_passing,
        (snapshot.skipped, snapshot.failed, snapshot.error, snapshot.missing),
        (snapshot.tracked, snapshot.untracked, snapshot.intended, snapshot.reference_missing),
        snapshot.test_count,
    )
    assert numbers == (
        tpu_run.pk,
        cpu_run.pk,
        tpu_run.started_at,
        0.25,
        1,
        4,
        (1, 1, 0, 1),
        (1, 1, 1, 1),
        4,
    )


def test_a_second_write_updates_the_same_row_and_no_reference_means_no_score(project):
    cpu_run, tpu_run = run_make(project, "cpu"), run_make(project, "tpu")
    current_set(project, "cpu", {f"{A}t1": P, f"{A}t2": P}, run=cpu_run)
    current_set(project, "tpu", {f"{A}t1": P, f"{A}t2": P}, run=tpu_run)
    first = write(project, cpu_run)
    assert (first.score, first.passing) == (1.0, 2)

    again = write(project, None)

    assert again.pk == first.pk and Snapshot.objects.count() == 1
    assert (again.score, again.passing, again.reference_passing, again.reference_run_id) == (
        None,
        0,
        0,
        None,
    )


def test_a_snapshot_counts_tracked_gaps_citing_only_closed_issues_apart(project):
    cpu_run, tpu_run = run_make(project, "cpu"), run_make(project, "tpu")
    current_set(project, "cpu", {f"{A}t{n}": P for n in range(1, 4)}, run=cpu_run)
    current_set(project, "tpu", {}, run=tpu_run)
    for name in ("t1", "t2", "t3"):
        gap_open(project, "tpu", f"{A}{name}", "missing", run=tpu_run)
    Gap.objects.filter(test__name__in=["t1", "t2"]).update(tracked=True)
    Gap.objects.filter(test__name="t1").update(tracked_closed=True)

    snapshot = write(project, cpu_run)

    assert (snapshot.tracked, snapshot.tracked_closed, snapshot.untracked) == (2, 1, 1)


def queue_counts(snapshot: Snapshot) -> tuple[int, int, int, int]:
    return (
        snapshot.queue_gaps,
        snapshot.queue_missing,
        snapshot.queue_missing_files,
        snapshot.queue_reasons,
    )


def test_a_snapshot_counts_the_queues_headline_and_its_files(project):
    cpu_run, tpu_run = run_make(project, "cpu"), run_make(project, "tpu")
    passing = {f"{A}t{n}": P for n in range(1, 5)}
    current_set(project, "cpu", {**passing, "test/b.py::TestB::t1": P}, run=cpu_run)
    current_set(project, "tpu", {f"{A}t1": P}, run=tpu_run)
    cited = reason_of(project, "no kernel")
    gap_open(project, "tpu", f"{A}t2", "missing", run=tpu_run)
    gap_open(project, "tpu", f"{A}t3", "skipped", run=tpu_run, reason=cited)
    # Infrastructure's (run health: rerun, no gap of the backend's to triage) and outside the
    # score: never queued.
    gap_open(project, "tpu", f"{A}t4", "crashed", run=tpu_run)
    gap_open(project, "tpu", f"{A}t9", "reference_missing", run=tpu_run)
    assert queue_counts(write(project, cpu_run)) == (2, 1, 1, 1)

    # Another file's test missing: a file more.
    gap_open(project, "tpu", "test/b.py::TestB::t1", "missing", run=tpu_run)
    assert queue_counts(write(project, cpu_run)) == (3, 2, 2, 1)

    # Triaged gaps leave the queue; the missing test left is in one file.
    Gap.objects.filter(test__name="t2").update(intended=True)
    Gap.objects.filter(test__name="t3").update(tracked=True)
    assert queue_counts(write(project, cpu_run)) == (1, 1, 1, 0)
