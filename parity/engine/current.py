"""Current runs: a backend's latest complete run on the project's default branch, and the
combined outcome of each of its tests (``CurrentOutcome``), the base of every gap."""

from django.db import connection

from parity.definitions import OUTCOME_PARAMS, current_runs, run_outcomes
from parity.engine.presence import presence_apply
from parity.models import Backend, CurrentOutcome, Project, Run
from parity.models.sql import model_sql
from parity.plans import SORTS_DEFAULT, SORTS_IN_MEMORY_UNTIL_COMMIT, hash_joins


def current_run_pick(*, project: Project, backend: Backend) -> Run | None:
    """The backend's current run: its latest complete run, by when CI ran it."""
    return current_runs(project).filter(backend=backend).first()


# A diff rather than a replacement: from one night to the next most tests keep their outcome,
# and only the rows that changed are written (an upsert of every row probed the unique index
# once per test). One hash join of the run's outcomes with the backend's, planned so whatever
# the statistics say (``parity.plans.hash_joins``), finds the tests added, changed and gone
# (``was``: the outcome a changed or gone test had); the writes then touch those rows alone.
# The run's outcomes stay in the statement (a temporary table of them cost a write of every
# test and a join planned on no statistics, slower than this), and are counted there; its
# results are sorted in memory (``parity.plans``).
_OUTCOMES_SQL = model_sql(
    """
    {sorts_in_memory};
    DROP TABLE IF EXISTS parity_outcome_changes;
    CREATE TEMP TABLE parity_outcome_changes ON COMMIT DROP AS
    SELECT test_id, outcome, reason_id, true AS added, outcome AS was FROM {current}
    WITH NO DATA;
    WITH o AS MATERIALIZED ({outcomes}), changes AS (
        INSERT INTO parity_outcome_changes
        SELECT coalesce(o.test_id, c.test_id), o.outcome, o.reason_id, c.test_id IS NULL,
               c.outcome
        FROM o
        FULL JOIN (
            SELECT test_id, outcome, reason_id FROM {current} WHERE backend_id = %(backend)s
        ) c ON c.test_id = o.test_id
        WHERE o.test_id IS NULL OR c.test_id IS NULL
           OR (o.outcome, o.reason_id) IS DISTINCT FROM (c.outcome, c.reason_id)
    )
    SELECT count(*) FROM o;
    """,
    current=CurrentOutcome,
    outcomes=run_outcomes("run"),
    sorts_in_memory=SORTS_IN_MEMORY_UNTIL_COMMIT,
)
_CHANGES_SQL = model_sql(
    """
    {sorts_default};
    ANALYZE parity_outcome_changes;
    DELETE FROM {current} c USING parity_outcome_changes x
    WHERE c.backend_id = %(backend)s AND c.test_id = x.test_id AND x.outcome IS NULL;
    UPDATE {current} c SET outcome = x.outcome, reason_id = x.reason_id
    FROM parity_outcome_changes x
    WHERE c.backend_id = %(backend)s AND c.test_id = x.test_id AND NOT x.added
      AND x.outcome IS NOT NULL;
    INSERT INTO {current} (project_id, backend_id, test_id, outcome, reason_id, since)
    SELECT %(project)s, %(backend)s, test_id, outcome, reason_id, %(since)s
    FROM parity_outcome_changes WHERE added;
    """,
    current=CurrentOutcome,
    sorts_default=SORTS_DEFAULT,
)


def current_outcomes_refresh(*, backend: Backend, run: Run) -> int:
    """Replace the backend's current outcomes with ``run``'s; returns its number of tests."""
    params = {
        **OUTCOME_PARAMS,
        "project": run.project_id,
        "backend": backend.pk,
        "run": run.pk,
        "since": run.started_at,
    }
    with connection.cursor() as cursor:
        with hash_joins(cursor):
            cursor.execute(_OUTCOMES_SQL, params)
            tests = cursor.fetchone()[0]
        # Planned on the changes' statistics: a few rows are probed through the unique index.
        cursor.execute(_CHANGES_SQL, params)
    presence_apply(backend_id=backend.pk)
    return tests
