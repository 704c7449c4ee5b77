"""``TestPresence``: per test, the backends whose current run has it and where it passes. A
backend's move rewrites its membership in the rows of the tests whose outcome changed
(``parity_outcome_changes``), so a nightly touches a few hundred rows and a first run its
tests; a backend retired leaves every row.

**Invariant:** a test's row lists exactly the backends with a ``CurrentOutcome`` of it, and
of those the ones whose outcome is passed (``tests/parity/engine/test_presence.py``)."""

from django.db import connection

from parity.models import Outcome, TestPresence
from parity.models.sql import model_sql

# Each changed test's row: the backend taken out of both lists, then put back where its new
# outcome says (gone: nowhere). The lists stay sorted, so equal sets group together.
_APPLY = model_sql(
    """
    INSERT INTO {presence} AS p (test_id, project_id, present, passing)
    SELECT x.test_id, %(project)s,
           CASE WHEN x.outcome IS NOT NULL THEN ARRAY[%(backend)s::bigint] ELSE '{{}}' END,
           CASE WHEN x.outcome = %(passed)s THEN ARRAY[%(backend)s::bigint] ELSE '{{}}' END
    FROM parity_outcome_changes x
    ON CONFLICT (test_id) DO UPDATE SET
        present = ARRAY(
            SELECT b FROM unnest(array_remove(p.present, %(backend)s) || EXCLUDED.present) b
            ORDER BY b
        ),
        passing = ARRAY(
            SELECT b FROM unnest(array_remove(p.passing, %(backend)s) || EXCLUDED.passing) b
            ORDER BY b
        )
    """,
    presence=TestPresence,
)
_FORGET = model_sql(
    """
    UPDATE {presence}
    SET present = array_remove(present, %(backend)s), passing = array_remove(passing, %(backend)s)
    WHERE project_id = %(project)s AND %(backend)s = ANY(present)
    """,
    presence=TestPresence,
)


def presence_apply(*, project_id: int, backend_id: int) -> None:
    """The backend's changed outcomes (``parity_outcome_changes``) into the tests' rows."""
    params = {"project": project_id, "backend": backend_id, "passed": Outcome.PASSED}
    with connection.cursor() as cursor:
        cursor.execute(_APPLY, params)


def presence_forget(*, project_id: int, backend_id: int) -> None:
    """A backend left with no current outcome is on no test."""
    with connection.cursor() as cursor:
        cursor.execute(_FORGET, {"project": project_id, "backend": backend_id})
