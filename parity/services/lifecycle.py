"""The run lifecycle: a run collects shard uploads until it is complete, then parity is refreshed.

A run turns complete three ways: its last upload says ``complete=true`` (``ingest.pipeline``;
for a shard ``I/N``, once every shard 1..N has arrived too: ``run_shards_arrived``), CI calls
``POST /api/v1/runs/<id>/complete/`` (``ingest.api``), or its uploads stay quiet for
``PARITY_RUN_QUIET_MINUTES`` (the beat task ``parity.tasks.runs_complete_quiet``). A shard that
lands after that refreshes parity again. All of them go through the functions below.

Why here, in the ``parity`` app and outside both ``ingest`` and ``parity.engine``: the run is a
``parity`` model that both sides share; ingest decides *when* a run is complete, the engine
decides *what* completeness changes. Kept in ``ingest.services`` it made the engine import
ingest (for the quiet sweep) while ingest imported the engine's task, a loop of six modules.
Here the dependencies go one way: ``ingest`` → ``parity.services.lifecycle`` → ``parity.tasks``
(the Celery adapter of the engine) → ``parity.engine``. The one import back is the quiet sweep's
beat task in ``parity.tasks``, deferred to its body (``tools/import_cycles.py`` declares it).
"""

import datetime
import logging

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Max, Q
from django.utils import timezone

from parity.celery import task_send
from parity.models import Run, Upload, UploadStatus
from parity.pure.shards import shard_parse
from parity.tasks import run_completed, suite_run_finished

logger = logging.getLogger(__name__)


def run_complete(*, run: Run) -> Run:
    """Mark a run complete: no more shards will come."""
    if not run.complete:
        run.complete = True
        run.completed_at = timezone.now()
        run.save(update_fields=["complete", "completed_at"])
        run_parity_refresh(run=run)
        if run.uploads.exclude(suite="").exists():
            suite_run_refresh(run=run)
        logger.info("run %s complete", run.pk)
    return run


def run_shards_arrived(*, run: Run, upload: Upload) -> bool:
    """Whether ``upload``, just ingested, completes ``run``. An upload of no shard ``I/N`` (the
    last job of a sharded run, or a run of one job) does when it says ``complete=true``. One of
    shard ``I/N`` does once each of the N shards has an ingested upload and one of the run's
    uploads said ``complete=true`` (every shard, or only the one known to run last): the first
    shard to finish no longer completes a run whose other shards are still running (its gate
    then judged their tests missing). Call it with the run locked, as ``ingest.pipeline``
    does: of two shards finishing together, the second sees the first's upload."""
    parsed = shard_parse(upload.shard)
    if parsed is None:
        return upload.completes_run
    count = parsed[1]
    ingested = set(
        Upload.objects.filter(run=run, status=UploadStatus.DONE).values_list(
            "shard", "completes_run"
        )
    )
    arrived = {p[0] for p in (shard_parse(s) for s, _ in ingested) if p and p[1] == count}
    return len(arrived) == count and any(said for _, said in ingested)


def run_parity_refresh(*, run: Run) -> None:
    """Recompute parity for a complete run once the current transaction commits, so the worker
    sees the run's results and its complete flag. Idempotent: a late shard may call it again."""
    transaction.on_commit(lambda: task_send(run_completed, run.pk))


def suite_run_refresh(*, run: Run) -> None:
    """Apply the run's suites to their stored summaries once the current transaction commits:
    an upload of it naming a suite was ingested or failed, or it completed (its gate now counts
    absent tests). Idempotent: a run applied before with the same gate changes nothing."""
    transaction.on_commit(lambda: task_send(suite_run_finished, run.pk))


def runs_complete_quiet(*, now: datetime.datetime | None = None) -> list[int]:
    """Mark complete every run with at least one ingested upload, none still queued or
    processing, and none finished within ``PARITY_RUN_QUIET_MINUTES``. Oldest first, so each
    backend's current run moves forward in order. Returns the ids of the runs completed."""
    now = now or timezone.now()
    cutoff = now - datetime.timedelta(minutes=settings.PARITY_RUN_QUIET_MINUTES)
    pending = [UploadStatus.QUEUED, UploadStatus.PROCESSING]
    quiet = (
        Run.objects.filter(complete=False)
        .annotate(
            last_finished=Max("uploads__finished_at"),
            pending=Count("uploads", filter=Q(uploads__status__in=pending)),
            done=Count("uploads", filter=Q(uploads__status=UploadStatus.DONE)),
        )
        .filter(last_finished__lt=cutoff, pending=0, done__gt=0)
        .order_by("started_at", "pk")
    )
    completed = []
    for run in quiet:
        with transaction.atomic():  # each run's recompute is queued when its own commit lands
            run_complete(run=run)
        completed.append(run.pk)
    if completed:
        logger.info("runs completed after the quiet period: %s", completed)
    return completed
