"""Backends run other commits than the reference, at other times: a test the reference first ran
in a run CI started after a backend's current run is ``pending`` there (``PendingTest``: not yet
run there), not a gap, and a test the reference dropped after the backend's run started is not
``reference_missing``. Both are taken out of the gaps each backend should have
(``parity_desired``, written by ``parity.engine.gaps``) before its gaps are closed, changed and
opened to match, so they never open a gap, write an event or count in a number.

When the reference first ran a test is ``CurrentOutcome.since`` of its row (the start of the
reference's current run that added it), so pending needs no read of results: the diff marks a
test ``pending`` when the backend's run lacks it and that time is later than the run's start.
A dropped test is looked up in the reference's run that was current when the backend's run
started (its newest complete default-branch run started no later), one index probe per test the
backend has and the reference's current run lacks, and only for backends whose run is older than
the reference's current run.
"""

from psycopg2 import sql

from parity.definitions import PENDING, current_run_at
from parity.models import BackendState, CurrentOutcome, PendingTest, Project, Result, Run
from parity.models.sql import model_sql
from parity.plans import FENCE

# Rewritten for the backends and tests diffed (every test, or only those the diff's scope says
# can change: those whose outcome on the reference just changed, as a test's pending state
# depends on its ``since`` there and on the backend's run, or a backend's nightly's). Rows
# exist only while the reference is ahead of a backend, a few files' tests at a time. Each
# row's ``since`` is a probe of the reference's row by the unique (backend, test) index behind
# a fence, whatever the join settings, so nothing is read when nothing is pending.
_PENDING_SQL = """
    DELETE FROM {pending} WHERE backend_id = ANY(%(backends)s) {scope};
    WITH moved AS (
        DELETE FROM parity_desired WHERE state = {pending_state} RETURNING backend_id, test_id
    )
    INSERT INTO {pending} (project_id, backend_id, test_id, since)
    SELECT %(project)s, m.backend_id, m.test_id, r.since
    FROM moved m CROSS JOIN LATERAL (
        SELECT c.since FROM {current} c
        WHERE c.backend_id = %(reference)s AND c.test_id = m.test_id
        {fence}
    ) r;
    """


def _pending_sql(scope: str | None) -> sql.Composed:
    where = (
        sql.SQL("AND test_id IN (SELECT test_id FROM {})").format(sql.Identifier(scope))
        if scope
        else sql.SQL("")
    )
    return model_sql(
        _PENDING_SQL,
        pending=PendingTest,
        current=CurrentOutcome,
        scope=where,
        pending_state=PENDING,
        fence=FENCE,
    )


# The diff's scopes (``parity.engine.gaps``): every test, the reference's changed tests, a
# backend's nightly.
_PENDING_BY_SCOPE = {
    scope: _pending_sql(scope) for scope in (None, "parity_outcome_changes", "parity_diff_scope")
}

# The reference's run that was current when each compared backend's run started, for the
# backends whose run started before the reference's current run (only theirs can miss a test the
# reference dropped since). NULL: the reference had no run yet then.
_THEN_SQL = model_sql(
    """
    DROP TABLE IF EXISTS parity_reference_then;
    CREATE TEMP TABLE parity_reference_then ON COMMIT DROP AS
    SELECT s.backend_id, {reference_then} AS run_id
    FROM {state} s
    JOIN {run} cr ON cr.id = s.current_run_id
    JOIN {project} p ON p.id = %(project)s
    JOIN {state} rs ON rs.backend_id = %(reference)s
    JOIN {run} rr ON rr.id = rs.current_run_id
    WHERE s.backend_id = ANY(%(backends)s) AND s.backend_id <> %(reference)s
      AND cr.started_at < rr.started_at;
    SELECT count(*) FROM parity_reference_then WHERE run_id IS NOT NULL;
    """,
    run=Run,
    state=BackendState,
    project=Project,
    reference_then=current_run_at(
        backend=sql.Placeholder("reference"),
        at=sql.SQL("cr.started_at"),
        default_branch=sql.SQL("p.default_branch"),
    ),
)

# One probe of the (run, test) index per reference_missing candidate of those backends.
_DROPPED_SQL = model_sql(
    """
    DELETE FROM parity_desired d
    WHERE d.state = 'reference_missing' AND (d.backend_id, d.test_id) IN (
        SELECT x.backend_id, x.test_id
        FROM parity_desired x
        JOIN parity_reference_then b ON b.backend_id = x.backend_id
        CROSS JOIN LATERAL (
            SELECT 1 FROM {result} res
            WHERE res.run_id = b.run_id AND res.test_id = x.test_id LIMIT 1
        ) had
        WHERE x.state = 'reference_missing'
    )
    """,
    result=Result,
)


def pending_split(cursor, params: dict, *, scope: str | None = None) -> None:
    """Take the pending tests out of ``parity_desired`` into ``PendingTest``, and drop the
    ``reference_missing`` rows of tests the reference ran when the backend's run started.
    ``params``: the gap diff's (project, backends, reference, has_reference); ``scope``: the
    temporary table of the tests the diff covers (``parity_desired`` holds only theirs), or
    None for every test."""
    cursor.execute(_PENDING_BY_SCOPE[scope], params)
    if not params["has_reference"]:
        return
    cursor.execute(_THEN_SQL, params)
    if cursor.fetchone()[0]:
        cursor.execute(_DROPPED_SQL, params)
