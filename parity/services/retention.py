"""History that never fills the disk: raw results and uploaded files of old runs are deleted;
runs, uploads and the engine's roll-ups (snapshots, reason trends, gap events) are kept forever,
so every page keeps its history.

A run expires ``PARITY_RESULTS_KEEP_DAYS`` after CI ran it, unless it is a backend's current or
previous run (verdicts and coverage drops compare them), whatever its age. Results go in bounded
batches, each its own transaction, so a large expiry never holds long locks or a huge WAL burst.
"""

import datetime
import logging
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from parity.models import BackendState, FileSeconds, Result, Run, UploadFile
from parity.models.sql import model_sql

logger = logging.getLogger(__name__)


@dataclass
class Expired:
    runs: list[int] = field(default_factory=list)
    results: int = 0
    files: int = 0


def runs_expirable(*, now: datetime.datetime):
    """Runs older than the retention period whose results are still stored, oldest first,
    minus every backend's current and previous run."""
    cutoff = now - datetime.timedelta(days=settings.PARITY_RESULTS_KEEP_DAYS)
    states = BackendState.objects.values_list("current_run_id", "previous_run_id")
    kept = {run_id for pair in states for run_id in pair if run_id is not None}
    return (
        Run.objects.filter(started_at__lt=cutoff, results_expired_at__isnull=True)
        .exclude(Q(pk__in=kept))
        .order_by("started_at", "pk")
    )


def results_expire(
    *, now: datetime.datetime | None = None, batch_size: int = 50_000, max_runs: int = 1000
) -> Expired:
    """Delete the raw results and files of up to ``max_runs`` expirable runs."""
    now = now or timezone.now()
    expired = Expired()
    for run in runs_expirable(now=now)[:max_runs]:
        expired.results += _results_delete(run_id=run.pk, batch_size=batch_size)
        with transaction.atomic():
            files = UploadFile.objects.filter(upload__run=run)
            expired.files += files.count()
            files.delete()  # the raw files go once this commits (parity.models.cleanup)
            FileSeconds.objects.filter(run_id=run.pk).delete()
            Run.objects.filter(pk=run.pk).update(results_expired_at=now)
        expired.runs.append(run.pk)
    if expired.runs:
        logger.info(
            "retention: %s runs expired, %s results and %s files deleted",
            len(expired.runs),
            expired.results,
            expired.files,
        )
    return expired


_DELETE_BATCH_SQL = model_sql(
    """
    DELETE FROM {result} WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM {result} WHERE run_id = %(run)s LIMIT %(limit)s
    ));
    """,
    result=Result,
)


def _results_delete(*, run_id: int, batch_size: int) -> int:
    deleted = 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_DELETE_BATCH_SQL, {"run": run_id, "limit": batch_size})
            deleted += cursor.rowcount
        if cursor.rowcount < batch_size:
            return deleted
