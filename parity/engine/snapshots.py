"""Per backend and current run: score, gap counts by state and by triage (``tracked_closed``: of
the tracked, those whose every cited issue is closed), test count and coverage drop, upserted
into ``Snapshot`` and pointed to by ``BackendState.snapshot``."""

from django.db import connection
from psycopg2 import sql

from parity.definitions import (
    ABSENT,
    INFRA,
    OUTCOME_PARAMS,
    counted_sql,
    first_ran_after,
    triage_candidates,
)
from parity.models import (
    BackendState,
    CurrentOutcome,
    DeclaredNotPassed,
    FileGapCount,
    Gap,
    PendingTest,
    Project,
    Run,
    Snapshot,
    TestCase,
)
from parity.models.sql import model_sql

# Counts come from the open gaps (already diffed and triaged) and the current outcomes.
# Score: tests passing on both / tests passing on the reference (NULL with no reference). A
# backend has an open gap of a scored state for each reference-passing test it does not pass
# (``parity.engine.gaps``), so those it passes are the reference's passing tests less those
# gaps: no join of the two backends' outcomes. Tests pending on a backend (the reference first
# ran them after its run) are neither: left out of its reference_passing, counted apart. So are
# tests declared not applicable there (gaps whose triage says so): counted apart, and in the
# stored score, which is the raw figure (``parity.pure.scores``), as failures. Tests whose files
# infrastructure lost (``INFRA``: crashed, timed out...) are counted apart too (``rerun``), in
# no score: the verdict asks for a rerun, not a fix.
# The agreement definitions also need the reference's tests it did not pass: only a project
# that uses one joins the two backends' outcomes for them (``_DIFFER``).
# In the triage queue (``parity.selectors.queue.untracked_gaps``): untracked, of the backend's
# own gaps (``counted_sql``: not ``reference_missing``, declared or lost to infrastructure).
_QUEUED = sql.SQL("({counted} AND NOT tracked AND NOT intended AND NOT flaky)").format(
    counted=counted_sql()
)

_SNAPSHOT_SQL = """
    WITH reference_passing AS (
        SELECT count(*) AS n FROM {current}
        WHERE backend_id = %(reference)s AND outcome = %(passed)s AND %(has_reference)s
    ), reference_tests AS (
        SELECT coalesce(max(test_count), 0) AS n FROM {state}
        WHERE backend_id = %(reference)s AND %(has_reference)s
    ), gaps AS (
        -- Counted per (backend, state, flags) first, then folded: the conditions below run
        -- once per group, not once per open gap (a backend has tens of thousands).
        SELECT backend_id,
            coalesce(sum(n) FILTER (WHERE {scored} AND state = 'skipped'), 0) AS skipped,
            coalesce(sum(n) FILTER (WHERE {scored} AND state = 'failed'), 0) AS failed,
            coalesce(sum(n) FILTER (WHERE {scored} AND state = 'error'), 0) AS error,
            coalesce(sum(n) FILTER (WHERE {scored} AND state IN {absent}), 0) AS missing,
            coalesce(sum(n) FILTER (WHERE state <> 'reference_missing' AND not_applicable), 0)
                AS not_applicable,
            coalesce(sum(n) FILTER (WHERE state IN {infra} AND NOT not_applicable), 0) AS rerun,
            coalesce(sum(n) FILTER (WHERE {scored} AND tracked), 0) AS tracked,
            coalesce(sum(n) FILTER (WHERE {scored} AND NOT tracked AND NOT intended
                                    AND NOT flaky), 0) AS untracked,
            coalesce(sum(n) FILTER (WHERE {scored} AND intended), 0) AS intended,
            coalesce(sum(n) FILTER (WHERE {scored} AND tracked_closed), 0) AS tracked_closed,
            coalesce(sum(n) FILTER (WHERE state = 'reference_missing'), 0) AS reference_missing,
            coalesce(sum(n) FILTER (WHERE {scored}), 0) AS scored,
            coalesce(sum(n) FILTER (WHERE {queued}), 0) AS queue_gaps,
            coalesce(sum(n) FILTER (WHERE {queued} AND state = 'missing'), 0) AS queue_missing,
            count(DISTINCT reason_id) FILTER (WHERE {queued}) AS queue_reasons
        FROM (
            -- By reason too: a backend's gaps cite a few dozen reasons at most.
            SELECT backend_id, state, tracked, intended, tracked_closed, not_applicable, flaky,
                   reason_id, count(*) AS n
            FROM {gap}
            WHERE is_open AND backend_id = ANY(%(backends)s)
            GROUP BY backend_id, state, tracked, intended, tracked_closed, not_applicable, flaky,
                     reason_id
        ) counted
        GROUP BY backend_id
    ), missing_files AS (
        -- The files of the queue's missing tests: their counts per file, kept with the gaps.
        SELECT backend_id, count(*) AS n FROM {file_gaps}
        WHERE backend_id = ANY(%(backends)s) AND queue_missing > 0 GROUP BY backend_id
    ), pending AS (
        SELECT backend_id, count(*) AS n FROM {pending}
        WHERE backend_id = ANY(%(backends)s) GROUP BY backend_id
    ), {differ}, written AS (
        INSERT INTO {snapshot} (
            project_id, backend_id, run_id, reference_run_id, at, score, passing,
            reference_passing, skipped, failed, error, missing, tracked, untracked, intended,
            tracked_closed, reference_missing, pending, not_applicable, rerun, reference_tests,
            differ_not_passed, not_applicable_not_passed, test_count, coverage_drop,
            queue_gaps, queue_missing, queue_missing_files, queue_reasons
        )
        SELECT s.project_id, s.backend_id, s.current_run_id, %(reference_run)s, r.started_at,
               CASE WHEN c.compared > 0
                    THEN (c.compared - coalesce(g.scored, 0) - coalesce(g.not_applicable, 0))::float
                         / c.compared END,
               c.compared - coalesce(g.scored, 0) - coalesce(g.not_applicable, 0),
               c.compared - coalesce(g.not_applicable, 0),
               coalesce(g.skipped, 0), coalesce(g.failed, 0), coalesce(g.error, 0),
               coalesce(g.missing, 0), coalesce(g.tracked, 0), coalesce(g.untracked, 0),
               coalesce(g.intended, 0), coalesce(g.tracked_closed, 0),
               coalesce(g.reference_missing, 0), coalesce(pd.n, 0),
               coalesce(g.not_applicable, 0), coalesce(g.rerun, 0),
               greatest(rt.n - coalesce(pd.n, 0) - coalesce(g.not_applicable, 0)
                        - coalesce(g.rerun, 0) - coalesce(d.newer, 0)
                        - coalesce(d.not_applicable, 0), 0),
               coalesce(d.n, 0), coalesce(d.not_applicable, 0),
               s.test_count, s.coverage_drop,
               coalesce(g.queue_gaps, 0), coalesce(g.queue_missing, 0),
               coalesce(mf.n, 0), coalesce(g.queue_reasons, 0)
        FROM {state} s
        JOIN {run} r ON r.id = s.current_run_id
        CROSS JOIN reference_passing rp
        CROSS JOIN reference_tests rt
        LEFT JOIN gaps g ON g.backend_id = s.backend_id
        LEFT JOIN pending pd ON pd.backend_id = s.backend_id
        LEFT JOIN differ d ON d.backend_id = s.backend_id
        LEFT JOIN missing_files mf ON mf.backend_id = s.backend_id
        -- The reference's passing tests compared here: not pending, not lost by infrastructure.
        CROSS JOIN LATERAL (
            SELECT rp.n - coalesce(pd.n, 0) - coalesce(g.rerun, 0) AS compared
        ) c
        WHERE s.backend_id = ANY(%(backends)s)
        ON CONFLICT (backend_id, run_id) DO UPDATE SET
            reference_run_id = EXCLUDED.reference_run_id, at = EXCLUDED.at,
            score = EXCLUDED.score, passing = EXCLUDED.passing,
            reference_passing = EXCLUDED.reference_passing, skipped = EXCLUDED.skipped,
            failed = EXCLUDED.failed, error = EXCLUDED.error, missing = EXCLUDED.missing,
            tracked = EXCLUDED.tracked, untracked = EXCLUDED.untracked,
            intended = EXCLUDED.intended, tracked_closed = EXCLUDED.tracked_closed,
            reference_missing = EXCLUDED.reference_missing, pending = EXCLUDED.pending,
            not_applicable = EXCLUDED.not_applicable, rerun = EXCLUDED.rerun,
            reference_tests = EXCLUDED.reference_tests,
            differ_not_passed = EXCLUDED.differ_not_passed,
            not_applicable_not_passed = EXCLUDED.not_applicable_not_passed,
            test_count = EXCLUDED.test_count, coverage_drop = EXCLUDED.coverage_drop,
            queue_gaps = EXCLUDED.queue_gaps, queue_missing = EXCLUDED.queue_missing,
            queue_missing_files = EXCLUDED.queue_missing_files,
            queue_reasons = EXCLUDED.queue_reasons
        RETURNING id, backend_id
    )
    UPDATE {state} s SET snapshot_id = w.id
    FROM written w WHERE s.backend_id = w.backend_id;
    """


_CLEARED = model_sql(
    "declarations_cleared AS"
    " (DELETE FROM {declared_not_passed} WHERE backend_id = ANY(%(backends)s))",
    declared_not_passed=DeclaredNotPassed,
)


def _snapshot_sql(differ: sql.Composable) -> sql.Composed:
    return model_sql(
        _SNAPSHOT_SQL,
        differ=differ,
        current=CurrentOutcome,
        gap=Gap,
        pending=PendingTest,
        snapshot=Snapshot,
        state=BackendState,
        run=Run,
        file_gaps=FileGapCount,
        queued=_QUEUED,
        scored=counted_sql(),
        infra=INFRA,
        absent=ABSENT,
    )


# The reference's tests it did not pass, per backend: those it first ran after the backend's
# run (newer: not compared yet, like pending ones), and of the others, those whose outcome here
# differs (absent included) and, apart, those of them declared not applicable here (a triage of
# that kind applies, as it would to a gap: ``parity.definitions.triage_picks`` picks one first).
# Each declaration's share of those is kept too (``DeclaredNotPassed``, the backends' rows
# replaced): it is in use, not stale (``parity.engine.gap_triages``), and its page counts them.
_DIFFER = model_sql(
    """
    not_passed AS MATERIALIZED (
        SELECT row_number() OVER () AS row_id, s.backend_id, ro.test_id, bo.reason_id,
               {newer} AS newer
        FROM {state} s
        JOIN {run} r ON r.id = s.current_run_id
        JOIN {current} ro ON ro.backend_id = %(reference)s AND ro.outcome <> %(passed)s
        LEFT JOIN {current} bo ON bo.backend_id = s.backend_id AND bo.test_id = ro.test_id
        WHERE %(has_reference)s AND s.backend_id = ANY(%(backends)s)
          AND s.backend_id <> %(reference)s
          AND ({newer} OR bo.outcome IS DISTINCT FROM ro.outcome)
    ), differing AS MATERIALIZED (
        SELECT d.*, tc.key AS test_key, tc.file AS test_file
        FROM not_passed d JOIN {testcase} tc ON tc.id = d.test_id
        WHERE NOT d.newer
    ), declaring AS MATERIALIZED (
        SELECT DISTINCT c.row_id, c.triage_id FROM ({candidates}) c
        WHERE c.kind = 'not_applicable'
    ), declared AS (
        SELECT DISTINCT row_id FROM declaring
    ), differ AS (
        SELECT d.backend_id,
            count(*) FILTER (WHERE d.newer) AS newer,
            count(*) FILTER (WHERE NOT d.newer AND x.row_id IS NULL) AS n,
            count(*) FILTER (WHERE NOT d.newer AND x.row_id IS NOT NULL) AS not_applicable
        FROM not_passed d LEFT JOIN declared x ON x.row_id = d.row_id
        GROUP BY d.backend_id
    ), {cleared}, declarations_written AS (
        INSERT INTO {declared_not_passed} (project_id, triage_id, backend_id, tests)
        SELECT %(project)s, x.triage_id, d.backend_id, count(*)
        FROM declaring x JOIN differing d ON d.row_id = x.row_id
        GROUP BY x.triage_id, d.backend_id
    )
    """,
    cleared=_CLEARED,
    declared_not_passed=DeclaredNotPassed,
    state=BackendState,
    run=Run,
    current=CurrentOutcome,
    testcase=TestCase,
    candidates=triage_candidates("differing", "row_id"),
    newer=first_ran_after(sql.SQL("ro.since"), sql.SQL("r.started_at")),
)

# The default definition needs none of that: its statement joins no outcomes and matches no
# triages (its recompute pays nothing for the agreement definitions). It clears the backends'
# ``DeclaredNotPassed`` rows, left by an agreement definition the project used before.
_SNAPSHOT_DEFAULT_SQL = _snapshot_sql(
    sql.SQL(
        "differ AS (SELECT NULL::bigint AS backend_id, 0 AS newer, 0 AS n, 0 AS not_applicable"
        " WHERE false), {cleared}"
    ).format(cleared=_CLEARED)
)
_SNAPSHOT_AGREE_SQL = _snapshot_sql(_DIFFER)


def snapshots_write(
    *, project: Project, backend_ids: list[int], reference_run_id: int | None
) -> None:
    """Upsert the snapshot of each backend's current run (backends without one are skipped)."""
    params = {
        **OUTCOME_PARAMS,
        "backends": backend_ids,
        "reference": project.reference_backend_id,
        "reference_run": reference_run_id,
        "has_reference": reference_run_id is not None,
        "project": project.pk,
    }
    agree = project.score_settings().agreement
    with connection.cursor() as cursor:
        cursor.execute(_SNAPSHOT_AGREE_SQL if agree else _SNAPSHOT_DEFAULT_SQL, params)
