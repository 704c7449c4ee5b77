"""A backend's snapshots as one a day: the day's last (UTC), the point the overview's score
trend and burn-down draw. A backend completing a hundred runs a day has a hundred snapshots a
day, and a 90-day window held 171k rows at twenty backends; one a day is 1,800 however many
runs there are.

**Invariant:** a day's point is the snapshot with the greatest ``(at, pk)`` of that day
inside the window, as reading every snapshot and keeping each day's last would give."""

import datetime
from dataclasses import dataclass

from psycopg2 import sql

from parity.models import Backend, Snapshot
from parity.models.sql import model_sql
from parity.read_replica import read_cursor

# Per backend, the window's first and last snapshot (two probes of ``snapshot_backend_at``),
# then per day between them the day's last (one backward probe a day): the cost follows days
# x backends, not runs.
_DAILY = """
SELECT b.project_id, b.name, s.at, {fields}
FROM {backend} b
CROSS JOIN LATERAL (
    SELECT min(at) AS first, max(at) AS last FROM {snapshot}
    WHERE backend_id = b.id AND at >= %(since)s
) bounds
CROSS JOIN LATERAL generate_series(
    date_trunc('day', bounds.first, 'UTC'), bounds.last, interval '1 day'
) AS d (day)
CROSS JOIN LATERAL (
    SELECT * FROM {snapshot} s
    WHERE s.backend_id = b.id AND s.at >= greatest(d.day, %(since)s)
      AND s.at < d.day + interval '1 day'
    ORDER BY s.at DESC, s.id DESC
    LIMIT 1
) s
WHERE b.project_id = ANY(%(projects)s) AND NOT (b.id = ANY(%(excluded)s))
ORDER BY b.project_id, b.id, s.at
"""


@dataclass(frozen=True)
class SnapshotDay:
    project_id: int
    backend: str  # its name
    at: datetime.datetime
    values: dict  # the fields asked for


def snapshot_days(
    *,
    project_ids: list[int],
    since: datetime.datetime,
    fields: tuple[str, ...],
    excluded_backends: tuple[int, ...] = (),
) -> list[SnapshotDay]:
    """Per backend of those projects (but ``excluded_backends``), the last snapshot of each UTC
    day it has one since ``since``, with ``fields``; by project, backend and time. One query."""
    statement = model_sql(
        _DAILY,
        backend=Backend,
        snapshot=Snapshot,
        fields=sql.SQL(", ").join(sql.Identifier("s", f) for f in fields),
    )
    params = {"projects": project_ids, "since": since, "excluded": list(excluded_backends)}
    with read_cursor() as cursor:
        cursor.execute(statement, params)
        return [
            SnapshotDay(project_id, backend, at, dict(zip(fields, values, strict=True)))
            for project_id, backend, at, *values in cursor.fetchall()
        ]
