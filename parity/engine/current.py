"""Current runs: a backend's latest complete run on the project's default branch, and the
combined outcome of each of its tests (``CurrentOutcome``), the base of every gap."""

from django.db import connection

from parity.definitions import OUTCOME_PARAMS, default_branch_runs, run_outcomes
from parity.engine.plans import hash_joins
from parity.models import Backend, CurrentOutcome, Project, Run
from parity.models.sql import model_sql


def current_run_pick(*, project: Project, backend: Backend) -> Run | None:
    """The backend's current run: its latest complete run, by when CI ran it."""
    return (
        default_branch_runs(project)
        .filter(backend=backend, complete=True)
        .order_by("-started_at", "-pk")
        .first()
    )


# A diff rather than a replacement: from one night to the next most tests keep their outcome,
# and only the rows that changed are written (an upsert of every row probed the unique index
# once per test). Each statement is a hash join of the run's outcomes with the backend's,
# whatever the statistics say (``plans.hash_joins``), so the temporary table needs no ANALYZE.
_REFRESH_SQL = model_sql(
    """
    DROP TABLE IF EXISTS parity_run_outcomes;
    CREATE TEMP TABLE parity_run_outcomes ON COMMIT DROP AS {outcomes};
    DELETE FROM {current} c
    WHERE c.backend_id = %(backend)s
      AND NOT EXISTS (SELECT 1 FROM parity_run_outcomes o WHERE o.test_id = c.test_id);
    UPDATE {current} c SET outcome = o.outcome, reason_id = o.reason_id
    FROM parity_run_outcomes o
    WHERE c.backend_id = %(backend)s AND c.test_id = o.test_id
      AND (c.outcome, c.reason_id) IS DISTINCT FROM (o.outcome, o.reason_id);
    INSERT INTO {current} (project_id, backend_id, test_id, outcome, reason_id)
    SELECT %(project)s, %(backend)s, o.test_id, o.outcome, o.reason_id FROM parity_run_outcomes o
    WHERE NOT EXISTS (
        SELECT 1 FROM {current} c WHERE c.backend_id = %(backend)s AND c.test_id = o.test_id
    );
    SELECT count(*) FROM parity_run_outcomes;
    """,
    current=CurrentOutcome,
    outcomes=run_outcomes("run"),
)


def current_outcomes_refresh(*, backend: Backend, run: Run) -> int:
    """Replace the backend's current outcomes with ``run``'s; returns its number of tests."""
    params = {**OUTCOME_PARAMS, "project": run.project_id, "backend": backend.pk, "run": run.pk}
    with connection.cursor() as cursor:
        with hash_joins(cursor):
            cursor.execute(_REFRESH_SQL, params)
            tests = cursor.fetchone()[0]
        return tests
