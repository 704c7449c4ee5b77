"""Diff each backend's current outcomes against the reference's into ``Gap`` rows: a gap's row
names the run that opened it and the one that closed it, and each change of its state between
is a ``GapEvent``. A few set-based statements per call, whatever the number of tests or
backends: the gaps each backend should have go to a temporary table (``parity_desired``), then
the open gaps are closed, changed and opened to match it. The gaps opened or given another
reason are listed in ``parity_gaps_touched``: only theirs can need another triage
(``parity.engine.gap_triages.triages_apply_touched``). Every test is diffed, or only a scope
of them when the rest cannot have changed: the reference's changed tests when it moved on, a
backend's tests its new run can change on its nightly (``_NIGHTLY_SCOPE_SQL``), or a late
shard of its current run can (``_RERUN_SCOPE_SQL``): the recompute's scope
(``parity.engine.scope``), whose steps (``parity.engine.recompute.STEPS``) run these writes.
"""

from dataclasses import dataclass

from django.db import connection
from psycopg2 import sql

from parity.definitions import (
    ABSENT,
    OUTCOME_PARAMS,
    REFERENCE_MISSING,
    absent_tests,
    current_run_at,
    first_ran_after,
    gap,
    gap_held,
    lacks_pass,
)
from parity.engine.pending import pending_split
from parity.models import (
    BackendState,
    CurrentOutcome,
    Gap,
    GapEvent,
    PendingTest,
    Project,
    Run,
    RunFile,
    RunFileState,
    TestCase,
)
from parity.models.sql import model_sql
from parity.plans import FENCE, hash_joins
from parity.pure.history_states import HistoryRules


@dataclass(frozen=True)
class Diffed:
    """How many gaps were closed, changed and opened."""

    counts: dict[str, int]


@dataclass(frozen=True)
class GapDiff:
    """One diff's parameters and statements. ``table``: the temporary table of the tests it
    covers (``parity.engine.scope.Scope.table``), None for every test of ``backend_ids``."""

    params: dict
    table: str | None
    statements: "_Statements"


def gap_diff_plan(
    *,
    project: Project,
    backend_ids: list[int],
    reference_run_id: int | None,
    cause: Run,
    table: str | None = None,
    replaced_run_id: int | None = None,
) -> GapDiff:
    """The diff of the open gaps of ``backend_ids`` against their current outcomes versus the
    reference's; events carry ``cause`` (the run whose completion triggered it) and its time.

    ``table`` ``parity_outcome_changes``: only the tests whose outcome on the reference just
    changed (left by ``current.current_outcomes_refresh`` of the reference's run) are diffed.
    That is exact when the reference moved on and no other backend's run did: a gap depends on
    the test's outcome on the reference and on the backend (and the backend's run manifest),
    so every other test keeps the gaps the last diff gave it.

    ``table`` ``parity_diff_scope``: ``backend_ids`` is one backend, not the reference, and only
    the tests of that table are diffed: those its nightly can change (``nightly_scope_write``,
    its run replaced ``replaced_run_id``), or a late shard of its current run can
    (``rerun_scope_write``)."""
    params = {
        **OUTCOME_PARAMS,
        "project": project.pk,
        "backends": backend_ids,
        "backend": backend_ids[0],
        "reference": project.reference_backend_id,
        "has_reference": reference_run_id is not None,
        "run": cause.pk,
        "at": cause.started_at,
        "replaced": replaced_run_id,
        # Held gaps (``gap_held``): only a project keeping states from history has any.
        "history": HistoryRules.of(project.history_rules).enabled,
    }
    statements = {
        None: _EVERY_TEST,
        "parity_outcome_changes": _CHANGED_ONLY,
        "parity_diff_scope": _NIGHTLY,
    }[table]
    return GapDiff(params=params, table=table, statements=statements)


def gaps_diff(
    *, project: Project, backend_ids: list[int], reference_run_id: int | None, cause: Run
) -> Diffed:
    """Bring the open gaps of ``backend_ids`` in line with their current outcomes versus the
    reference's, every test diffed, in one call (a recompute runs the diff as its steps,
    ``parity.engine.recompute.STEPS``). Returns how many gaps were closed, changed and
    opened."""
    diff = gap_diff_plan(
        project=project, backend_ids=backend_ids, reference_run_id=reference_run_id, cause=cause
    )
    with connection.cursor() as cursor, hash_joins(cursor):
        desired_write(cursor, diff)
        pending_split(cursor, diff.params, scope=diff.table)
        counts = gaps_write(cursor, diff)
    return Diffed(counts=counts)


def desired_write(cursor, diff: GapDiff) -> None:
    """The gaps each backend should have (``parity_desired``), an empty
    ``parity_gaps_touched``. Planned as hash joins: the tests of a scope table alone are probed
    one by one (``_CHANGED_ROWS``), whatever the settings."""
    cursor.execute(diff.statements.desired, diff.params)


def gap_moves_write(cursor, diff: GapDiff, *, before: bool) -> None:
    """A scoped diff's absent gaps among its tests into ``parity_gap_moves``, before the
    writes (``before``) and after them (``_MOVES_SQL``)."""
    statement = diff.statements.moves_before if before else diff.statements.moves_after
    cursor.execute(statement, diff.params)


def gaps_write(cursor, diff: GapDiff) -> dict[str, int]:
    """Close, change and open the gaps to match ``parity_desired``, with their events; the gaps
    opened or given another reason go to ``parity_gaps_touched``. Returns how many of each."""
    closed = _rows(cursor, diff.statements.close, diff.params)
    changed = _rows(cursor, diff.statements.change, diff.params)
    opened = _rows(cursor, diff.statements.open, diff.params)
    return {"closed": closed, "changed": changed, "opened": opened}


def _rows(cursor, statement, params: dict) -> int:
    cursor.execute(statement, params)
    return cursor.rowcount


# Every gap each backend should have now (``parity.definitions.gap``). Without a reference
# current run there is nothing to compare with, so no gap at all (not "everything runs only
# here"). Planned as hash joins (``parity.plans``): planned on a guess of one row per backend,
# the join on (backend, test) ran as a loop over every pair of tests. A test absent from a
# backend's run whose file its run manifest says crashed, timed out, ran empty or never started
# gets that state (``parity_absent``), not ``missing``; one the reference first ran after the
# backend's run started is ``pending`` (``parity.engine.pending`` takes those out, with the
# tests the reference dropped after it).
#
# {compared}: the reference's rows compared, each with every backend compared, and the
# backend's row (``t``, NULL when it lacks the test); {runs_only_here}: the backends' tests the
# reference lacks.
_DESIRED_SQL = """
    DROP TABLE IF EXISTS parity_desired, parity_gaps_touched, parity_absent;
    CREATE TEMP TABLE parity_gaps_touched (id bigint PRIMARY KEY) ON COMMIT DROP;
    {absent_write}
    CREATE TEMP TABLE parity_desired ON COMMIT DROP AS
    -- Materialized: each backend's run start is read once, not once per test.
    WITH compared AS MATERIALIZED (
        SELECT backend_id,
               (SELECT cr.started_at FROM {run} cr WHERE cr.id = current_run_id) AS started_at
        FROM {state_table}
        WHERE backend_id = ANY(%(backends)s) AND backend_id <> %(reference)s
          AND current_run_id IS NOT NULL AND %(has_reference)s
    )
    SELECT b.backend_id, r.test_id, {state} AS state, t.reason_id
    {compared}
    LEFT JOIN parity_absent a ON a.backend_id = b.backend_id AND a.test_id = r.test_id
    WHERE r.outcome = %(passed)s AND {lacks_pass}
    UNION ALL
    {runs_only_here};
    """

# Over every test: whole backends, hash-joined.
_EVERY_ROWS = {
    "compared": model_sql(
        """
    FROM (SELECT test_id, outcome, since FROM {current} WHERE backend_id = %(reference)s) r
    CROSS JOIN compared b
    LEFT JOIN {current} t ON t.backend_id = b.backend_id AND t.test_id = r.test_id
        AND t.backend_id = ANY(%(backends)s)
    """,
        current=CurrentOutcome,
    ),
    "runs_only_here": model_sql(
        """
    SELECT t.backend_id, t.test_id, {reference_missing}, t.reason_id
    FROM {current} t
    WHERE t.backend_id = ANY(%(backends)s) AND t.backend_id <> %(reference)s
      AND %(has_reference)s
      AND NOT EXISTS (
          SELECT 1 FROM {current} r WHERE r.backend_id = %(reference)s AND r.test_id = t.test_id
      )
    """,
        current=CurrentOutcome,
        reference_missing=REFERENCE_MISSING,
    ),
}


# Over the tests of a scope table (``{scope}``): the reference's changed tests
# (``parity_outcome_changes``, analyzed, its ``outcome`` NULL when the reference dropped the
# test) or a backend's nightly (``parity_diff_scope``, ``_NIGHTLY_SCOPE_SQL``). Each is looked
# up by the (backend, test) index, a probe per test and backend behind a fence, so a nightly's
# few hundred changes read a few hundred rows, and the reference's every test at worst reads
# each once.
_PROBED_COMPARED = """
    FROM {scope} x
    CROSS JOIN LATERAL (
        SELECT x.test_id, r.outcome, r.since FROM {current} r
        WHERE r.backend_id = %(reference)s AND r.test_id = x.test_id {fence}
    ) r
    CROSS JOIN compared b
    LEFT JOIN LATERAL (
        SELECT t.outcome, t.reason_id FROM {current} t
        WHERE t.backend_id = b.backend_id AND t.test_id = x.test_id {fence}
    ) t ON true
    """
# The backend's tests of the scope the reference lacks: of its changes, those it dropped.
_CHANGED_ONLY_HERE = """
    SELECT b.backend_id, x.test_id, {reference_missing}, t.reason_id
    FROM parity_outcome_changes x
    CROSS JOIN compared b
    CROSS JOIN LATERAL (
        SELECT t.reason_id FROM {current} t
        WHERE t.backend_id = b.backend_id AND t.test_id = x.test_id {fence}
    ) t
    WHERE x.outcome IS NULL
    """
# Of a nightly's, those whose probe finds no reference row.
_NIGHTLY_ONLY_HERE = """
    SELECT b.backend_id, x.test_id, {reference_missing}, t.reason_id
    FROM parity_diff_scope x
    CROSS JOIN compared b
    CROSS JOIN LATERAL (
        SELECT t.reason_id FROM {current} t
        WHERE t.backend_id = b.backend_id AND t.test_id = x.test_id {fence}
    ) t
    LEFT JOIN LATERAL (
        SELECT 1 AS found FROM {current} r
        WHERE r.backend_id = %(reference)s AND r.test_id = x.test_id {fence}
    ) r ON true
    WHERE r.found IS NULL
    """


def _probed_rows(scope: str, runs_only_here: str) -> dict[str, sql.Composed]:
    parts = {"current": CurrentOutcome, "fence": FENCE}
    return {
        "compared": model_sql(_PROBED_COMPARED, scope=sql.Identifier(scope), **parts),
        "runs_only_here": model_sql(runs_only_here, reference_missing=REFERENCE_MISSING, **parts),
    }


_CHANGED_ROWS = _probed_rows("parity_outcome_changes", _CHANGED_ONLY_HERE)
_NIGHTLY_ROWS = _probed_rows("parity_diff_scope", _NIGHTLY_ONLY_HERE)


_ABSENT_WRITE = model_sql(
    """
    CREATE TEMP TABLE parity_absent ON COMMIT DROP AS
    SELECT s.backend_id, a.test_id, a.state
    FROM {state_table} s JOIN ({absent}) a ON a.run_id = s.current_run_id
    WHERE s.backend_id = ANY(%(backends)s) AND s.backend_id <> %(reference)s
      AND %(has_reference)s;
    ANALYZE parity_absent;
    """,
    state_table=BackendState,
    absent=absent_tests(
        model_sql(
            "SELECT current_run_id FROM {state_table} WHERE backend_id = ANY(%(backends)s)",
            state_table=BackendState,
        )
    ),
)


# The same for the tests of a scope table (``{scope}``) alone: each test's file by its id, then
# the manifest's row of that file by the (run, file) key, both behind fences. A manifest naming
# hundreds of files not run (a backend running half the suite) is tens of thousands of tests a
# night, read by the whole-backend statement above.
_ABSENT_SCOPED_WRITE = """
    CREATE TEMP TABLE parity_absent ON COMMIT DROP AS
    SELECT s.backend_id, x.test_id, rf.state
    FROM {scope} x
    CROSS JOIN LATERAL (SELECT t.file FROM {test} t WHERE t.id = x.test_id {fence}) t
    CROSS JOIN {state_table} s
    CROSS JOIN LATERAL (
        SELECT rf.state FROM {run_file} rf
        WHERE rf.run_id = s.current_run_id AND rf.file = t.file AND rf.state <> {ran} {fence}
    ) rf
    WHERE s.backend_id = ANY(%(backends)s) AND s.backend_id <> %(reference)s
      AND %(has_reference)s;
    ANALYZE parity_absent;
    """


def _desired_sql(rows: dict[str, sql.Composed], scope: str | None = None) -> sql.Composed:
    absent_write = _ABSENT_WRITE
    if scope is not None:
        absent_write = model_sql(
            _ABSENT_SCOPED_WRITE,
            scope=sql.Identifier(scope),
            test=TestCase,
            state_table=BackendState,
            run_file=RunFile,
            ran=sql.Literal(RunFileState.RAN.value),
            fence=FENCE,
        )
    return model_sql(
        _DESIRED_SQL,
        compared=rows["compared"],
        runs_only_here=rows["runs_only_here"],
        state_table=BackendState,
        run=Run,
        state=gap(
            sql.SQL("t.outcome"),
            absent=sql.SQL("a.state"),
            pending=first_ran_after(sql.SQL("r.since"), sql.SQL("b.started_at")),
        ),
        lacks_pass=lacks_pass(sql.SQL("t.outcome")),
        absent_write=absent_write,
    )


# Close the open gaps no longer desired, but those held open while their test is flaky
# (``gap_held``: a flaky test's gap stays open, reading flaky, until the test leaves the state;
# ``parity.engine.history`` closes it then).
_CLOSE_SQL = model_sql(
    """
    UPDATE {gap} g SET is_open = false, closed_run_id = %(run)s, closed_at = %(at)s
    WHERE g.is_open AND g.project_id = %(project)s AND g.backend_id = ANY(%(backends)s)
      AND NOT EXISTS (
          SELECT 1 FROM parity_desired d
          WHERE d.backend_id = g.backend_id AND d.test_id = g.test_id
      )
      AND NOT {held};
    """,
    gap=Gap,
    held=gap_held(gap="g", backend=sql.SQL("g.backend_id"), test=sql.SQL("g.test_id")),
)


# A backend's nightly: its run ``%(run)s`` replaced ``%(replaced)s``, the reference stayed. A
# gap of a test depends on the test's row on the reference (unchanged), its row on the backend
# (changed only for the tests of ``parity_outcome_changes``) and the backend's run: its start
# (a test the reference first ran after it is pending), its manifest (a test of a crashed file
# is ``crashed``, not ``missing``) and the reference's run that was current when it started (a
# test the reference dropped since is no gap, ``pending.py``). So the tests that can change:
# - the backend's changed outcomes;
# - its pending tests: the new run started later, so some of them are due now. (One that was
#   not pending cannot become so: the run started no earlier, checked below, or every test);
# - the tests of the files whose state differs between the two runs' manifests (the
#   ``absent_tests`` states; a file crashed last night and fine tonight changes no outcome);
# - when the reference's run current at the run's start changed, every test the backend has
#   and the reference lacks (those it drops as the reference's since, or no longer).
# Every other test keeps the outcome, manifest state, pending state and reference it was
# diffed with. Every test is diffed instead when the reference has no current run or the new
# run started before the old one (tests due before could be pending again): neither happens
# when a newer run completes, as a current run is the latest started.


# The reference's run that was current when a run started at ``at`` started, where that run
# is older than the reference's current run (as ``pending._THEN_SQL`` picks it); else NULL.
def _reference_then(at: str) -> sql.Composed:
    return sql.SQL("CASE WHEN {at} < r.reference_at THEN {then} END").format(
        at=sql.SQL(at),
        then=current_run_at(
            backend=sql.Placeholder("reference"),
            at=sql.SQL(at),
            default_branch=sql.SQL("r.default_branch"),
        ),
    )


_NIGHTLY_CHECK_SQL = model_sql(
    """
    WITH runs AS (
        SELECT n.started_at AS new_at, o.started_at AS old_at, rr.started_at AS reference_at,
               p.default_branch
        FROM {run} n, {run} o, {project} p, {state} rs JOIN {run} rr ON rr.id = rs.current_run_id
        WHERE n.id = %(run)s AND o.id = %(replaced)s AND p.id = %(project)s
          AND rs.backend_id = %(reference)s
    )
    SELECT r.new_at >= r.old_at, {then_old} IS DISTINCT FROM {then_new}
    FROM runs r
    """,
    run=Run,
    project=Project,
    state=BackendState,
    then_old=_reference_then("r.old_at"),
    then_new=_reference_then("r.new_at"),
)
_NIGHTLY_SCOPE_SQL = """
    DROP TABLE IF EXISTS parity_diff_scope;
    CREATE TEMP TABLE parity_diff_scope ON COMMIT DROP AS
    SELECT test_id FROM parity_outcome_changes
    UNION
    SELECT test_id FROM {pending} WHERE backend_id = %(backend)s
    UNION
    SELECT tc.id FROM (
        (SELECT file, state FROM {run_file} WHERE run_id = %(replaced)s AND state <> {ran}
         EXCEPT SELECT file, state FROM {run_file} WHERE run_id = %(run)s AND state <> {ran})
        UNION ALL
        (SELECT file, state FROM {run_file} WHERE run_id = %(run)s AND state <> {ran}
         EXCEPT SELECT file, state FROM {run_file} WHERE run_id = %(replaced)s AND state <> {ran})
    ) f
    CROSS JOIN LATERAL (  -- fenced: the files' tests by the (project, file) index
        SELECT t.id FROM {test} t WHERE t.project_id = %(project)s AND t.file = f.file {fence}
    ) tc
    {reference_missing};
    ANALYZE parity_diff_scope;
    """
_NIGHTLY_REFERENCE_MISSING = """
    UNION
    SELECT t.test_id FROM {current} t
    WHERE t.backend_id = %(backend)s AND NOT EXISTS (
        SELECT 1 FROM {current} r WHERE r.backend_id = %(reference)s AND r.test_id = t.test_id
    )
    """


def _nightly_scope_sql(*, reference_missing: bool) -> sql.Composed:
    return model_sql(
        _NIGHTLY_SCOPE_SQL,
        pending=PendingTest,
        run_file=RunFile,
        test=TestCase,
        ran=sql.Literal(RunFileState.RAN.value),
        reference_missing=model_sql(_NIGHTLY_REFERENCE_MISSING, current=CurrentOutcome)
        if reference_missing
        else sql.SQL(""),
        fence=FENCE,
    )


_NIGHTLY_SCOPES = {flag: _nightly_scope_sql(reference_missing=flag) for flag in (False, True)}


def nightly_bounded(*, project: Project, cause: Run, replaced_run_id: int) -> bool | None:
    """Whether a backend's nightly (its run ``cause`` replacing ``replaced_run_id``) can be
    bounded (``_NIGHTLY_SCOPE_SQL``): None when every test must be diffed, else whether the
    reference's run current at the run's start changed. The reference has a current run."""
    params = {
        "project": project.pk,
        "reference": project.reference_backend_id,
        "run": cause.pk,
        "replaced": replaced_run_id,
    }
    with connection.cursor() as cursor:
        cursor.execute(_NIGHTLY_CHECK_SQL, params)
        row = cursor.fetchone()
    if row is None or not row[0]:
        return None
    return row[1]


def nightly_scope_write(cursor, diff: GapDiff, *, reference_changed: bool) -> None:
    """``parity_diff_scope`` for a backend's nightly (``_NIGHTLY_SCOPE_SQL``)."""
    cursor.execute(_NIGHTLY_SCOPES[reference_changed], diff.params)


def rerun_scope_write(cursor, diff: GapDiff) -> None:
    """``parity_diff_scope`` for a late shard of a backend's current run (``_RERUN_SCOPE_SQL``)."""
    cursor.execute(_RERUN_SCOPE_SQL, diff.params)


# A late shard (or a retried task) of a backend's current run: the run, its start and the
# reference are those its every gap was diffed with; what it can have changed is
# - the backend's outcomes (``parity_outcome_changes``: the tests the shard added or changed);
# - its manifest, which the shard's upload may have added files to or moved a file's state in.
#   The state each file had at the last diff is not kept, so: the tests of every file the
#   manifest now lists as not ran (their state may be new), and the tests with an open gap in
#   one of those states (crashed, not_run...: their file's may have changed, or be ``ran``
#   now). A ``missing`` gap's file was ran or unlisted; if it is not ran now, its tests are in.
# A pending test stays pending: its outcome on the backend (none) is among the changes if the
# shard brought it, and nothing else it depends on moved.
_RERUN_SCOPE_SQL = model_sql(
    """
    DROP TABLE IF EXISTS parity_diff_scope;
    CREATE TEMP TABLE parity_diff_scope ON COMMIT DROP AS
    SELECT test_id FROM parity_outcome_changes
    UNION
    SELECT g.test_id FROM {gap} g
    WHERE g.project_id = %(project)s AND g.is_open AND g.backend_id = %(backend)s
      AND g.state IN {not_ran}
    UNION
    SELECT tc.id FROM {run_file} f
    CROSS JOIN LATERAL (  -- fenced: the files' tests by the (project, file) index
        SELECT t.id FROM {test} t WHERE t.project_id = %(project)s AND t.file = f.file {fence}
    ) tc
    WHERE f.run_id = %(run)s AND f.state <> {ran};
    ANALYZE parity_diff_scope;
    """,
    gap=Gap,
    not_ran=sql.SQL("({})").format(
        sql.SQL(", ").join(sql.Literal(s.value) for s in RunFileState if s != RunFileState.RAN)
    ),
    run_file=RunFile,
    test=TestCase,
    ran=sql.Literal(RunFileState.RAN.value),
    fence=FENCE,
)


# A reason change alone (same state, other wording) updates the row without an event. A held
# gap (``gap_held``) whose test passes now is no desired gap: this leaves it as its last failure
# left it (its state and reason), so it does not flip with each pass; read with ``Gap.flaky``
# it stands ``failed · flaky`` on every surface until its test leaves flaky.
_CHANGE_SQL = model_sql(
    """
    WITH changed AS (
        UPDATE {gap} g SET state = d.state, reason_id = d.reason_id
        FROM {gap} old
        JOIN parity_desired d ON d.backend_id = old.backend_id AND d.test_id = old.test_id
        WHERE old.id = g.id AND g.is_open AND g.project_id = %(project)s
          AND g.backend_id = ANY(%(backends)s)
          AND (old.state <> d.state OR old.reason_id IS DISTINCT FROM d.reason_id)
        RETURNING g.id, g.backend_id, old.state AS from_state, g.state AS to_state,
                  old.reason_id IS DISTINCT FROM g.reason_id AS reason_changed
    ), touched AS (
        INSERT INTO parity_gaps_touched SELECT id FROM changed WHERE reason_changed
    )
    INSERT INTO {event} (project_id, backend_id, gap_id, from_state, to_state, run_id, at)
    SELECT %(project)s, backend_id, id, from_state, to_state, %(run)s, %(at)s
    FROM changed WHERE from_state <> to_state;
    """,
    gap=Gap,
    event=GapEvent,
)


# Open the desired gaps not open yet (``{not_open}``: a desired gap's (backend, test) has no
# open gap).
_OPEN_SQL_TEXT = """
    WITH opened AS (
        INSERT INTO {gap} (project_id, backend_id, test_id, state, reason_id, is_open,
                           opened_run_id, opened_at, tracked, intended)
        SELECT %(project)s, d.backend_id, d.test_id, d.state, d.reason_id, true, %(run)s,
               %(at)s, false, false
        FROM parity_desired d
        {not_open}
        ORDER BY d.backend_id, d.test_id
        RETURNING id
    )
    INSERT INTO parity_gaps_touched SELECT id FROM opened;
    """
_NOT_OPEN = """
        WHERE NOT EXISTS (
            SELECT 1 FROM {gap} g
            WHERE g.is_open AND g.backend_id = ANY(%(backends)s)
              AND g.backend_id = d.backend_id AND g.test_id = d.test_id
        )"""
_OPEN_SQL = model_sql(_OPEN_SQL_TEXT, gap=Gap, not_open=model_sql(_NOT_OPEN, gap=Gap))


# The same three writes when only the tests of a scope table were diffed (``{scope}``: the
# reference's changes, a backend's nightly). Hash-joined, each read every open gap of the
# backends, however few the scope's tests: here each test of the scope, or each desired gap,
# probes the open gap of its (backend, test) by the unique index behind a fence, and the gaps
# written are read by id (``= ANY(ARRAY(...))``, an index scan whatever the join settings).
_CLOSE_SCOPED_SQL = """
    UPDATE {gap} g SET is_open = false, closed_run_id = %(run)s, closed_at = %(at)s
    WHERE g.id = ANY(ARRAY(
        SELECT o.id
        FROM {scope} x
        CROSS JOIN unnest(%(backends)s::integer[]) b(backend_id)
        CROSS JOIN LATERAL (
            SELECT o.id, o.state FROM {gap} o
            WHERE o.is_open AND o.backend_id = b.backend_id AND o.test_id = x.test_id {fence}
        ) o
        WHERE NOT EXISTS (
            SELECT 1 FROM parity_desired d
            WHERE d.backend_id = b.backend_id AND d.test_id = x.test_id
        )
          AND NOT {held}
    ));
    """
_CHANGE_SCOPED_SQL = """
    WITH old AS MATERIALIZED (
        SELECT o.id, o.backend_id, o.state AS from_state, o.reason_id AS from_reason_id,
               d.state, d.reason_id
        FROM parity_desired d
        CROSS JOIN LATERAL (
            SELECT o.id, o.backend_id, o.state, o.reason_id FROM {gap} o
            WHERE o.is_open AND o.backend_id = d.backend_id AND o.test_id = d.test_id {fence}
        ) o
        WHERE o.state <> d.state OR o.reason_id IS DISTINCT FROM d.reason_id
    ), changed AS (
        UPDATE {gap} g SET state = old.state, reason_id = old.reason_id
        FROM old
        WHERE g.id = ANY(ARRAY(SELECT id FROM old)) AND g.id = old.id
        RETURNING g.id, g.backend_id, old.from_state, g.state AS to_state,
                  old.from_reason_id IS DISTINCT FROM g.reason_id AS reason_changed
    ), touched AS (
        INSERT INTO parity_gaps_touched SELECT id FROM changed WHERE reason_changed
    )
    INSERT INTO {event} (project_id, backend_id, gap_id, from_state, to_state, run_id, at)
    SELECT %(project)s, backend_id, id, from_state, to_state, %(run)s, %(at)s
    FROM changed WHERE from_state <> to_state;
    """
_NOT_OPEN_PROBED = """
        LEFT JOIN LATERAL (
            SELECT 1 AS found FROM {gap} g
            WHERE g.is_open AND g.backend_id = d.backend_id AND g.test_id = d.test_id {fence}
        ) g ON true
        WHERE g.found IS NULL"""
_OPEN_SCOPED_SQL = model_sql(
    _OPEN_SQL_TEXT, gap=Gap, not_open=model_sql(_NOT_OPEN_PROBED, gap=Gap, fence=FENCE)
)


# A scoped diff's open gaps in an absent state (``missing``, ``crashed``...) among its tests,
# before (-1) and after (+1) the writes: the file cells' missing counts move by their sum
# (``rollups.file_cells_write``), without a recount of every open gap of the backends.
_MOVES_SQL = """
    {create}
    SELECT b.backend_id, x.test_id, {n} AS n
    FROM {scope} x
    CROSS JOIN unnest(%(backends)s::integer[]) b(backend_id)
    CROSS JOIN LATERAL (
        SELECT 1 FROM {gap} o
        WHERE o.is_open AND o.backend_id = b.backend_id AND o.test_id = x.test_id
          AND o.state IN {absent} {fence}
    ) o;
    """


def _moves_sql(scope: str, *, before: bool) -> sql.Composed:
    create = (
        "DROP TABLE IF EXISTS parity_gap_moves; "
        "CREATE TEMP TABLE parity_gap_moves ON COMMIT DROP AS"
        if before
        else "INSERT INTO parity_gap_moves"
    )
    return model_sql(
        _MOVES_SQL,
        create=sql.SQL(create),
        n=sql.Literal(-1 if before else 1),
        scope=sql.Identifier(scope),
        gap=Gap,
        absent=ABSENT,
        fence=FENCE,
    )


@dataclass(frozen=True)
class _Statements:
    desired: sql.Composed
    close: sql.Composed
    change: sql.Composed
    open: sql.Composed
    moves_before: sql.Composed | None = None
    moves_after: sql.Composed | None = None


def _statements(rows: dict[str, sql.Composed], scope: str | None) -> _Statements:
    """The diff's statements over ``rows``; ``scope``: the table of the tests they cover
    (None: every test of the backends)."""
    if scope is None:
        return _Statements(_desired_sql(rows), _CLOSE_SQL, _CHANGE_SQL, _OPEN_SQL)
    tables = {"gap": Gap, "scope": sql.Identifier(scope), "fence": FENCE}
    return _Statements(
        desired=_desired_sql(rows, scope),
        close=model_sql(
            _CLOSE_SCOPED_SQL,
            held=gap_held(gap="o", backend=sql.SQL("b.backend_id"), test=sql.SQL("x.test_id")),
            **tables,
        ),
        change=model_sql(_CHANGE_SCOPED_SQL, event=GapEvent, **tables),
        open=_OPEN_SCOPED_SQL,
        moves_before=_moves_sql(scope, before=True),
        moves_after=_moves_sql(scope, before=False),
    )


_EVERY_TEST = _statements(_EVERY_ROWS, None)
_CHANGED_ONLY = _statements(_CHANGED_ROWS, "parity_outcome_changes")
_NIGHTLY = _statements(_NIGHTLY_ROWS, "parity_diff_scope")
