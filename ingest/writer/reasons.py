"""Widening reasons' first/last seen dates, after an upload's results are committed."""

from django.db import connection

from parity.models import Reason
from parity.models.sql import model_sql

_TOUCH_REASONS_SQL = model_sql(
    """
    WITH locked AS (
        SELECT id FROM {reason}
        WHERE id = ANY(%(ids)s) AND (first_seen > %(seen)s OR last_seen < %(seen)s)
        ORDER BY id
        FOR NO KEY UPDATE
    )
    UPDATE {reason} r
    SET first_seen = least(r.first_seen, %(seen)s), last_seen = greatest(r.last_seen, %(seen)s)
    FROM locked WHERE r.id = locked.id;
    """,
    reason=Reason,
)


def reasons_seen_update(*, reason_ids: list[int], seen) -> None:
    """Widen the reasons' first/last seen to ``seen``. Run after the results commit, in id
    order: concurrent shards share reasons, and holding their rows until each shard's commit
    would serialize ingest (and, in arbitrary order, deadlock it)."""
    if not reason_ids:
        return
    with connection.cursor() as cursor:
        cursor.execute(_TOUCH_REASONS_SQL, {"ids": sorted(reason_ids), "seen": seen})
