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


# Upsert rather than replace: from one night to the next most tests keep their outcome, and
# unchanged rows are not rewritten. The temporary table is analyzed: without statistics the
# planner guesses its size.
_REFRESH_SQL = model_sql(
    """
    DROP TABLE IF EXISTS parity_run_outcomes;
    CREATE TEMP TABLE parity_run_outcomes ON COMMIT DROP AS {outcomes};
    ANALYZE parity_run_outcomes;
    DELETE FROM {current} c
    WHERE c.backend_id = %(backend)s
      AND NOT EXISTS (SELECT 1 FROM parity_run_outcomes o WHERE o.test_id = c.test_id);
    INSERT INTO {current} AS c (project_id, backend_id, test_id, outcome, reason_id)
    SELECT %(project)s, %(backend)s, o.test_id, o.outcome, o.reason_id FROM parity_run_outcomes o
    ON CONFLICT (backend_id, test_id) DO UPDATE
    SET outcome = EXCLUDED.outcome, reason_id = EXCLUDED.reason_id
    WHERE (c.outcome, c.reason_id) IS DISTINCT FROM (EXCLUDED.outcome, EXCLUDED.reason_id);
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
