"""The day partitions of results and file seconds: created ahead, dropped by retention.

Both tables are partitioned by run id range, one partition a day (``parity.pure.run_days``):
every read names its runs, so it reads only their days' partitions, and a day's results go
with one ``DROP TABLE`` instead of a delete of each row.

A partition is made as a table of its own and then attached: attaching locks the parent
against other DDL only (SHARE UPDATE EXCLUSIVE), where ``CREATE TABLE ... PARTITION OF`` would
lock out every read and write of results while it waits for them. Dropping cannot avoid the
exclusive lock; it waits at most ``LOCK_TIMEOUT`` and leaves the day to the next tick.
"""

import datetime
import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone
from psycopg2 import sql

from parity.models import FileSeconds, Result
from parity.pure.run_days import day_bounds, day_of, partition_day, partition_name, run_day

logger = logging.getLogger(__name__)

PARTITIONED = (Result, FileSeconds)
# Long enough for a recompute's reads to finish, short enough that reads queued behind the
# waiting lock do not stall a page.
LOCK_TIMEOUT = "5s"

# Days known to have their partitions in this process: the writer asks on every upload.
_ensured: set[int] = set()

_ATTACHED_SQL = """
    SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = %s::regclass
"""
_CREATE_SQL = (
    "CREATE TABLE IF NOT EXISTS {part} (LIKE {parent} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)"
)
_ATTACH_SQL = "ALTER TABLE {parent} ATTACH PARTITION {part} FOR VALUES FROM ({low}) TO ({high})"


def partitions_list(*, model=Result) -> dict[int, str]:
    """The day partitions of ``model``'s table: day -> partition name."""
    table = model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(_ATTACHED_SQL, [table])
        names = [name for (name,) in cursor.fetchall()]
    days = {partition_day(table, name): name for name in names}
    return {day: name for day, name in days.items() if day is not None}


def partitions_ensure(*, days: Iterable[int]) -> list[str]:
    """Create the partitions of ``days`` that are missing; returns the names created."""
    days = sorted(set(days))
    created: list[str] = []
    with transaction.atomic(), connection.cursor() as cursor, _lock_timeout(cursor):
        # One creator at a time: two would both find a day missing and race to attach it.
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext('parity.partitions'))")
        for model in PARTITIONED:
            parent = model._meta.db_table
            cursor.execute(_ATTACHED_SQL, [parent])
            attached = {name for (name,) in cursor.fetchall()}
            for day in days:
                name = partition_name(parent, day)
                if name in attached:
                    continue
                _partition_create(cursor, parent=parent, name=name, day=day)
                created.append(name)
    # Only days retention cannot have dropped since: another process may drop an old day.
    _ensured.update(day for day in days if day >= _today() - 1)
    if created:
        logger.info("partitions created: %s", ", ".join(created))
    return created


@contextmanager
def _lock_timeout(cursor) -> Iterator[None]:
    """``LOCK_TIMEOUT`` for the block, then the caller's again: the writer ensures its day
    inside an upload's transaction, whose own waits (the tests' lock) must not time out."""
    cursor.execute("SELECT current_setting('lock_timeout')")
    (previous,) = cursor.fetchone()
    cursor.execute("SELECT set_config('lock_timeout', %s, true)", [LOCK_TIMEOUT])
    yield  # an error rolls the block's savepoint back, and the setting with it
    cursor.execute("SELECT set_config('lock_timeout', %s, true)", [previous])


def _partition_create(cursor, *, parent: str, name: str, day: int) -> None:
    low, high = day_bounds(day)
    parts = {"parent": sql.Identifier(parent), "part": sql.Identifier(name)}
    cursor.execute(sql.SQL(_CREATE_SQL).format(**parts))
    cursor.execute(
        sql.SQL(_ATTACH_SQL).format(**parts, low=sql.Literal(low), high=sql.Literal(high))
    )


def partition_ensure_for_run(*, run_id: int) -> None:
    """Make sure the partition that takes ``run_id``'s results exists (cached per process), so
    an upload never waits for beat."""
    day = run_day(run_id)
    if day not in _ensured:
        partitions_ensure(days=[day])


def _today(now: datetime.datetime | None = None) -> int:
    return day_of((now or timezone.now()).astimezone(datetime.UTC).date())


def partition_ensure_quietly(*, run_id: int) -> None:
    """``partition_ensure_for_run`` as a new run's upload commits; a lock it cannot get in time
    is logged, not raised: the upload is stored, and the writer ensures again before it writes."""
    try:
        partition_ensure_for_run(run_id=run_id)
    except DatabaseError:
        logger.warning("partition of run %s not ensured yet", run_id, exc_info=True)


def partitions_create_ahead(*, now: datetime.datetime | None = None) -> list[str]:
    """Beat: today's partitions and those of the next ``PARITY_PARTITIONS_AHEAD_DAYS`` days."""
    today = _today(now)
    return partitions_ensure(days=range(today, today + settings.PARITY_PARTITIONS_AHEAD_DAYS + 1))


def partition_drop(*, day: int) -> None:
    """Drop ``day``'s partitions of results and file seconds, with every row in them."""
    with transaction.atomic(), connection.cursor() as cursor, _lock_timeout(cursor):
        for model in PARTITIONED:
            name = partition_name(model._meta.db_table, day)
            cursor.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(name)))
    _ensured.discard(day)
    logger.info("partitions of day %s dropped", day)
