"""History that never fills the disk: a day's raw results go with their partition.

A run expires ``PARITY_RESULTS_KEEP_DAYS`` after CI ran it, unless it is a backend's current or
previous run (verdicts and coverage drops compare them), whatever its age. What goes with an
expired run: its results and file seconds, its raw uploaded files and its run files (the
manifest). What stays: the run and
its uploads (one row each; pages list them), and the engine's roll-ups (snapshots, reason
trends, file cells), so every page keeps its numbers. Closed gaps go once closed longer than
the retention period, with their events; open gaps and their events stay.

A day (the day parity received its runs, ``parity.pure.run_days``) past the retention period
whose runs have all expired loses its partitions by ``DROP TABLE``: no row is deleted, no WAL
written per row, nothing left to vacuum. A day that holds a run to keep cannot be dropped: the
other runs' rows are deleted from it in bounded batches, each its own transaction, as are those
of a run CI ran long before parity received it.
With ``PARITY_PASSES_KEEP_DAYS`` set, passed results go sooner the same way (ResultDB's
pattern: failures and skips are what people look back for).
"""

import datetime
import logging
from dataclasses import dataclass, field

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import DatabaseError, connection, transaction
from django.db.models import F
from django.utils import timezone

from parity.models import (
    BackendState,
    FileSeconds,
    Gap,
    GapEvent,
    RawFileLeft,
    Result,
    Run,
    RunFile,
    UploadFile,
)
from parity.models.sql import model_sql
from parity.pure.run_days import day_bounds, day_of
from parity.raw_storage import raw_delete
from parity.storage.partitions import partition_drop, partitions_list

logger = logging.getLogger(__name__)


@dataclass
class Expired:
    runs: list[int] = field(default_factory=list)
    days: list[int] = field(default_factory=list)  # whose partitions were dropped
    results: int = 0  # deleted row by row (days with a run to keep)
    passes: int = 0
    files: int = 0
    gaps: int = 0


def _first_kept_id(now: datetime.datetime) -> int:
    """The first run id of the day ``PARITY_RESULTS_KEEP_DAYS`` before ``now``: the days before
    it are past retention, and no new run can land in them any more."""
    at = now - datetime.timedelta(days=settings.PARITY_RESULTS_KEEP_DAYS)
    return day_bounds(day_of(at.astimezone(datetime.UTC).date()))[0]


def runs_kept() -> set[int]:
    states = BackendState.objects.values_list("current_run_id", "previous_run_id")
    return {run_id for pair in states for run_id in pair if run_id is not None}


def runs_expirable(*, now: datetime.datetime, days: int | None = None):
    """Runs older than the retention period whose results are still stored, oldest first,
    minus every backend's current and previous run."""
    at = now - datetime.timedelta(days=settings.PARITY_RESULTS_KEEP_DAYS if days is None else days)
    return (
        Run.objects.filter(started_at__lt=at, results_expired_at__isnull=True)
        .exclude(pk__in=runs_kept())
        .order_by("started_at", "pk")
    )


def results_expire(
    *, now: datetime.datetime | None = None, batch_size: int = 50_000, max_runs: int = 1000
) -> Expired:
    """Drop the partitions of days past retention, delete the results of up to ``max_runs``
    expirable runs in days that keep a run, the passes past ``PARITY_PASSES_KEEP_DAYS``, and
    closed gaps past retention."""
    now = now or timezone.now()
    expired = Expired()
    _days_drop(now=now, expired=expired)
    for run in runs_expirable(now=now)[:max_runs]:
        expired.results += _rows_delete(run_id=run.pk, batch_size=batch_size)
        with transaction.atomic():
            _run_expire(run_ids=[run.pk], now=now, expired=expired)
    _passes_expire(now=now, batch_size=batch_size, max_runs=max_runs, expired=expired)
    expired.gaps = _closed_gaps_delete(now=now)
    if expired.runs or expired.passes or expired.gaps:
        logger.info(
            "retention: %s runs expired (days dropped: %s), %s results and %s passes deleted "
            "row by row, %s files, %s closed gaps",
            len(expired.runs),
            expired.days,
            expired.results,
            expired.passes,
            expired.files,
            expired.gaps,
        )
    return expired


def _days_drop(*, now: datetime.datetime, expired: Expired) -> None:
    """Drop each day past retention whose runs are all expirable or expired."""
    first_kept_id = _first_kept_id(now)
    expirable = set(runs_expirable(now=now).values_list("pk", flat=True))
    for day in sorted(partitions_list()):
        low, high = day_bounds(day)
        if high > first_kept_id:
            break
        runs = set(
            Run.objects.filter(
                id__gte=low, id__lt=high, results_expired_at__isnull=True
            ).values_list("pk", flat=True)
        )
        if not runs <= expirable:
            continue  # a run to keep (or not yet old by CI's clock): its rows go one by one
        try:
            with transaction.atomic():
                _run_expire(run_ids=sorted(runs), now=now, expired=expired)
                partition_drop(day=day)
        except DatabaseError:
            # The exclusive lock did not come in time (a long read): the next tick drops it.
            logger.warning("retention: day %s not dropped this time", day, exc_info=True)
            continue
        expired.days.append(day)


def _run_expire(*, run_ids: list[int], now: datetime.datetime, expired: Expired) -> None:
    """What goes with runs whose results went (or go with their partition)."""
    if not run_ids:
        return
    files = UploadFile.objects.filter(upload__run_id__in=run_ids)
    expired.files += files.count()
    files.delete()  # the raw files go once this commits (parity.models.cleanup)
    RunFile.objects.filter(run_id__in=run_ids).delete()
    FileSeconds.objects.filter(run_id__in=run_ids).delete()
    Run.objects.filter(pk__in=run_ids).update(results_expired_at=now)
    expired.runs.extend(run_ids)


def _passes_expire(
    *, now: datetime.datetime, batch_size: int, max_runs: int, expired: Expired
) -> None:
    days = settings.PARITY_PASSES_KEEP_DAYS
    if not days or days >= settings.PARITY_RESULTS_KEEP_DAYS:
        return  # passes are kept as long as the rest
    runs = runs_expirable(now=now, days=days).filter(passes_expired_at__isnull=True)
    for run_id in runs.values_list("pk", flat=True)[:max_runs]:
        expired.passes += _rows_delete(run_id=run_id, batch_size=batch_size, passes=True)
        Run.objects.filter(pk=run_id).update(passes_expired_at=now)


# Each batch names the run: only its day's partition is read.
_DELETE_BATCH_SQL = model_sql(
    """
    DELETE FROM {result} WHERE run_id = %(run)s AND ctid = ANY(ARRAY(
        SELECT ctid FROM {result} WHERE run_id = %(run)s AND (outcome = 1 OR NOT %(passes)s)
        LIMIT %(limit)s
    ));
    """,
    result=Result,
)


def _rows_delete(*, run_id: int, batch_size: int, passes: bool = False) -> int:
    deleted = 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                _DELETE_BATCH_SQL, {"run": run_id, "limit": batch_size, "passes": passes}
            )
            deleted += cursor.rowcount
        if cursor.rowcount < batch_size:
            return deleted


_CLOSED_GAPS_DELETE_SQL = model_sql(
    """
    WITH old AS (
        SELECT id FROM {gap} WHERE closed_at < %(before)s AND NOT is_open
    ), events AS (
        DELETE FROM {event} e USING old WHERE e.gap_id = old.id
    )
    DELETE FROM {gap} g USING old WHERE g.id = old.id
    """,
    gap=Gap,
    event=GapEvent,
)


def _closed_gaps_delete(*, now: datetime.datetime) -> int:
    """Closed gaps past retention and their events: the pages' windows are shorter."""
    before = now - datetime.timedelta(days=settings.PARITY_RESULTS_KEEP_DAYS)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_CLOSED_GAPS_DELETE_SQL, {"before": before})
        return cursor.rowcount


def raw_files_left_delete(*, limit: int = 1000) -> int:
    """Delete again the raw files the storage refused to delete (``RawFileLeft``); returns how
    many went. One still refused stays, its attempts counted, for the next pass. One a later
    upload of the same content stored again under the name (a row holds it now) is forgotten,
    not deleted."""
    left = list(RawFileLeft.objects.order_by("pk")[:limit])
    held = set(
        UploadFile.objects.filter(raw__in=[row.name for row in left]).values_list("raw", flat=True)
    )
    deleted, refused = [], []
    for row in left:
        if row.name not in held:
            (deleted if raw_delete(default_storage, row.name) else refused).append(row.pk)
    RawFileLeft.objects.filter(pk__in=[row.pk for row in left if row.pk not in refused]).delete()
    RawFileLeft.objects.filter(pk__in=refused).update(attempts=F("attempts") + 1)
    if left:
        logger.info(
            "raw files left in storage: %s deleted, %s held by uploads again, %s still refused",
            len(deleted), len(left) - len(deleted) - len(refused), len(refused),
        )  # fmt: skip
    return len(deleted)
