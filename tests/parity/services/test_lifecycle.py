"""The run lifecycle on its own: completing a run, refreshing parity, the quiet sweep.

Runs and uploads are rows made here, not uploads through the API, so each step is seen alone;
``engine/test_current_runs.py`` covers the same steps end to end through the upload API.
"""

import datetime

import pytest
from django.utils import timezone

from parity.models import BackendState, Run, Upload, UploadStatus
from parity.services import lifecycle

NOW = datetime.datetime(2026, 3, 2, 12, 0, tzinfo=datetime.UTC)


@pytest.fixture
def make_run(project):
    backends = {b.name: b for b in project.backends.all()}

    def _make(key: str, *, backend: str = "tpu", started: datetime.datetime = NOW) -> Run:
        return Run.objects.create(
            project=project,
            backend=backends[backend],
            key=key,
            commit=key.ljust(40, "0")[:40],
            branch=project.default_branch,
            started_at=started,
        )

    return _make


def _upload(run: Run, status: str, *, finished: datetime.datetime | None) -> Upload:
    return Upload.objects.create(
        run=run, sha256=f"{run.pk}-{status}-{finished}", size=1, status=status, finished_at=finished
    )


def test_run_complete_marks_the_run_and_queues_one_recompute(
    make_run, django_capture_on_commit_callbacks
):
    run = make_run("r1")

    with django_capture_on_commit_callbacks() as queued:
        returned = lifecycle.run_complete(run=run)

    stored = Run.objects.get(pk=run.pk)
    assert returned.pk == run.pk
    assert stored.complete
    assert stored.completed_at is not None
    assert len(queued) == 1


def test_run_complete_twice_changes_and_queues_nothing_more(
    make_run, django_capture_on_commit_callbacks
):
    run = make_run("r1")
    lifecycle.run_complete(run=run)
    completed_at = Run.objects.get(pk=run.pk).completed_at

    with django_capture_on_commit_callbacks() as queued:
        lifecycle.run_complete(run=Run.objects.get(pk=run.pk))

    assert queued == []
    assert Run.objects.get(pk=run.pk).completed_at == completed_at


def test_the_queued_refresh_runs_the_engine_for_that_run(
    make_run, django_capture_on_commit_callbacks
):
    run = make_run("r1", backend="cpu")
    Run.objects.filter(pk=run.pk).update(complete=True, completed_at=timezone.now())

    # Eager Celery: executing the on-commit callback runs parity.tasks.run_completed now.
    with django_capture_on_commit_callbacks(execute=True) as queued:
        lifecycle.run_parity_refresh(run=run)

    assert len(queued) == 1
    assert BackendState.objects.get(backend=run.backend).current_run_id == run.pk


def test_quiet_sweep_completes_quiet_runs_oldest_first(
    make_run, settings, django_capture_on_commit_callbacks
):
    settings.PARITY_RUN_QUIET_MINUTES = 60
    long_ago = NOW - datetime.timedelta(hours=3)
    newer = make_run("newer", started=NOW - datetime.timedelta(days=1))
    older = make_run("older", started=NOW - datetime.timedelta(days=2))
    _upload(newer, UploadStatus.DONE, finished=long_ago)
    _upload(older, UploadStatus.DONE, finished=long_ago)
    _upload(older, UploadStatus.FAILED, finished=long_ago)  # a failed shard does not hold it

    with django_capture_on_commit_callbacks() as queued:
        completed = lifecycle.runs_complete_quiet(now=NOW)

    assert completed == [older.pk, newer.pk]
    assert set(Run.objects.filter(complete=True).values_list("pk", flat=True)) == set(completed)
    assert len(queued) == 2  # one recompute per completed run


@pytest.mark.parametrize(
    ("uploads", "why"),
    [
        ([(UploadStatus.DONE, 30)], "an upload finished within the quiet period"),
        ([(UploadStatus.DONE, 180), (UploadStatus.QUEUED, None)], "an upload is still queued"),
        ([(UploadStatus.DONE, 180), (UploadStatus.PROCESSING, None)], "one is being ingested"),
        ([(UploadStatus.FAILED, 180)], "no upload was ingested"),
        ([], "no upload at all"),
    ],
)
def test_quiet_sweep_leaves_runs_that_are_not_quiet(make_run, settings, uploads, why):
    settings.PARITY_RUN_QUIET_MINUTES = 60
    run = make_run("open")
    for status, minutes_ago in uploads:
        finished = None if minutes_ago is None else NOW - datetime.timedelta(minutes=minutes_ago)
        _upload(run, status, finished=finished)

    assert lifecycle.runs_complete_quiet(now=NOW) == [], why
    assert not Run.objects.get(pk=run.pk).complete
