"""``PresenceBlock``: per backend and block of 64 test ids, the tests its current run has and
those that pass there, as two 64-bit sets. A backend's move rewrites the blocks of the tests
whose outcome changed (``parity_outcome_changes``): a nightly touches a few hundred rows, a
first run a row per 64 of its tests; a backend retired loses its rows.

**Invariant:** bit ``t % 64`` of a backend's block ``t // 64`` is set in ``present`` exactly when
the backend has a ``CurrentOutcome`` of test ``t``, and in ``passing`` when that outcome is
passed (``tests/parity/engine/test_presence.py``)."""

from django.db import connection

from parity.models import Outcome, PresenceBlock
from parity.models.sql import model_sql

# Each block's changed tests (``touched``) take their new membership: gone is neither present
# nor passing. A block left empty is deleted.
_APPLY = model_sql(
    """
    WITH d AS (
        SELECT test_id >> 6 AS block,
               bit_or(1::bigint << (test_id & 63)::int) AS touched,
               bit_or(CASE WHEN outcome IS NOT NULL THEN 1::bigint << (test_id & 63)::int
                           ELSE 0 END) AS present,
               bit_or(CASE WHEN outcome = %(passed)s THEN 1::bigint << (test_id & 63)::int
                           ELSE 0 END) AS passing
        FROM parity_outcome_changes GROUP BY 1
    )
    MERGE INTO {block} AS p
    USING d ON p.backend_id = %(backend)s AND p.block = d.block
    WHEN MATCHED AND (p.present & ~d.touched) | d.present = 0 THEN DELETE
    WHEN MATCHED THEN UPDATE SET present = (p.present & ~d.touched) | d.present,
                                 passing = (p.passing & ~d.touched) | d.passing
    WHEN NOT MATCHED AND d.present <> 0 THEN
        INSERT (backend_id, block, present, passing)
        VALUES (%(backend)s, d.block, d.present, d.passing)
    """,
    block=PresenceBlock,
)


def presence_apply(*, backend_id: int) -> None:
    """The backend's changed outcomes (``parity_outcome_changes``) into its blocks."""
    with connection.cursor() as cursor:
        cursor.execute(_APPLY, {"backend": backend_id, "passed": Outcome.PASSED})


def presence_forget(*, backend_id: int) -> None:
    """A backend left with no current outcome has no test."""
    PresenceBlock.objects.filter(backend_id=backend_id).delete()
