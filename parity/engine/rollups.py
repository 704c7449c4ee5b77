"""Roll-ups pages read instead of results: the file heatmap of current runs (``FileCell``, with
each file's recent duration for CI's shards) and the per-day count of each reason
(``ReasonDaily``)."""

import datetime
import logging
from collections.abc import Collection

from django.db import IntegrityError, connection, transaction
from psycopg2 import sql

from parity.definitions import ABSENT, OUTCOME_PARAMS, may_be_current_sql
from parity.models import (
    CurrentOutcome,
    FileCell,
    FileSeconds,
    Gap,
    Project,
    ReasonDaily,
    Run,
    TestCase,
)
from parity.models.sql import model_sql
from parity.plans import FENCE, hash_joins

logger = logging.getLogger(__name__)

# Outcome 0 marks a reference-passing test the backend's run lacks (an open gap in
# ``parity.models.ABSENT_STATES``: missing, crashed, ...).
# Upserted, rewriting only the cells that changed: most files keep their counts from one night
# to the next, and the table stays free of dead rows that would slow the heatmap's reads.
_FILE_CELLS_SQL = model_sql(
    """
    WITH cells AS (
        SELECT x.backend_id, x.file,
               count(*) FILTER (WHERE x.outcome = %(passed)s) AS passed,
               count(*) FILTER (WHERE x.outcome = %(failed)s) AS failed,
               count(*) FILTER (WHERE x.outcome = %(error)s) AS error,
               count(*) FILTER (WHERE x.outcome = %(skipped)s) AS skipped,
               count(*) FILTER (WHERE x.outcome = 0) AS missing
        FROM (
            SELECT c.backend_id, t.file, c.outcome
            FROM {current} c JOIN {test} t ON t.id = c.test_id AND t.project_id = %(project)s
            WHERE c.backend_id = ANY(%(backends)s)
            UNION ALL
            SELECT g.backend_id, t.file, 0
            FROM {gap} g JOIN {test} t ON t.id = g.test_id AND t.project_id = %(project)s
            WHERE g.is_open AND g.state IN {absent} AND g.backend_id = ANY(%(backends)s)
        ) x
        GROUP BY x.backend_id, x.file
    ), gone AS (
        DELETE FROM {cell} f
        WHERE f.backend_id = ANY(%(backends)s)
          AND NOT EXISTS (
              SELECT 1 FROM cells c WHERE c.backend_id = f.backend_id AND c.file = f.file
          )
    )
    INSERT INTO {cell} AS f (project_id, backend_id, file, passed, failed, error, skipped, missing)
    SELECT %(project)s, backend_id, file, passed, failed, error, skipped, missing FROM cells
    ON CONFLICT (backend_id, file) DO UPDATE
    SET passed = EXCLUDED.passed, failed = EXCLUDED.failed, error = EXCLUDED.error,
        skipped = EXCLUDED.skipped, missing = EXCLUDED.missing
    WHERE (f.passed, f.failed, f.error, f.skipped, f.missing)
          IS DISTINCT FROM (EXCLUDED.passed, EXCLUDED.failed, EXCLUDED.error, EXCLUDED.skipped,
                            EXCLUDED.missing);
    """,
    current=CurrentOutcome,
    test=TestCase,
    gap=Gap,
    cell=FileCell,
    absent=ABSENT,
)


# A backend whose current run stayed (the reference moved on) keeps its outcome counts: only its
# missing counts can change, counted from its missing gaps alone. The three writes touch
# different cells: those left with nothing, those with outcomes and no missing test any more, and
# those with missing tests.
_FILE_CELLS_MISSING_SQL = model_sql(
    """
    WITH missing AS (
        SELECT g.backend_id, t.file, count(*) AS n
        FROM {gap} g JOIN {test} t ON t.id = g.test_id AND t.project_id = %(project)s
        WHERE g.is_open AND g.state IN {absent} AND g.backend_id = ANY(%(backends)s)
        GROUP BY g.backend_id, t.file
    ), gone AS (
        DELETE FROM {cell} f
        WHERE f.backend_id = ANY(%(backends)s) AND f.missing > 0
          AND f.passed + f.failed + f.error + f.skipped = 0
          AND NOT EXISTS (
              SELECT 1 FROM missing m WHERE m.backend_id = f.backend_id AND m.file = f.file
          )
    ), none_missing AS (
        UPDATE {cell} f SET missing = 0
        WHERE f.backend_id = ANY(%(backends)s) AND f.missing > 0
          AND f.passed + f.failed + f.error + f.skipped > 0
          AND NOT EXISTS (
              SELECT 1 FROM missing m WHERE m.backend_id = f.backend_id AND m.file = f.file
          )
    )
    INSERT INTO {cell} AS f (project_id, backend_id, file, passed, failed, error, skipped, missing)
    SELECT %(project)s, backend_id, file, 0, 0, 0, 0, n FROM missing
    ON CONFLICT (backend_id, file) DO UPDATE SET missing = EXCLUDED.missing
    WHERE f.missing <> EXCLUDED.missing;
    """,
    test=TestCase,
    gap=Gap,
    cell=FileCell,
    absent=ABSENT,
)


# A scoped diff's cells move by what moved: each changed outcome of the backend whose run
# changed (``parity_outcome_changes``: -1 where it ``was``, +1 where it is now) and each absent
# gap the diff closed or opened among its tests (``parity_gap_moves``). A few hundred tests'
# files, where a recount read every test and open gap of the backends:
# their changes fall in half the files, so recounting only those saved little. Each test's
# file by its id, behind a fence; the cells by their (backend, file) key.
_FILE_CELL_DELTAS_SQL = model_sql(
    """
    DROP TABLE IF EXISTS parity_cell_deltas;
    CREATE TEMP TABLE parity_cell_deltas ON COMMIT DROP AS
    WITH moves AS (
        SELECT backend_id, test_id, 0 AS outcome, n FROM parity_gap_moves
        UNION ALL
        SELECT b.backend_id, x.test_id, x.was, -1
        FROM parity_outcome_changes x CROSS JOIN unnest(%(changed)s::integer[]) b(backend_id)
        WHERE x.was IS NOT NULL
        UNION ALL
        SELECT b.backend_id, x.test_id, x.outcome, 1
        FROM parity_outcome_changes x CROSS JOIN unnest(%(changed)s::integer[]) b(backend_id)
        WHERE x.outcome IS NOT NULL
    )
    SELECT m.backend_id, t.file,
           coalesce(sum(m.n) FILTER (WHERE m.outcome = %(passed)s), 0) AS passed,
           coalesce(sum(m.n) FILTER (WHERE m.outcome = %(failed)s), 0) AS failed,
           coalesce(sum(m.n) FILTER (WHERE m.outcome = %(error)s), 0) AS error,
           coalesce(sum(m.n) FILTER (WHERE m.outcome = %(skipped)s), 0) AS skipped,
           coalesce(sum(m.n) FILTER (WHERE m.outcome = 0), 0) AS missing
    FROM moves m
    CROSS JOIN LATERAL (SELECT t.file FROM {test} t WHERE t.id = m.test_id {fence}) t
    GROUP BY m.backend_id, t.file;
    DELETE FROM parity_cell_deltas
    WHERE passed = 0 AND failed = 0 AND error = 0 AND skipped = 0 AND missing = 0;
    ANALYZE parity_cell_deltas;
    UPDATE {cell} f
    SET passed = f.passed + d.passed, failed = f.failed + d.failed, error = f.error + d.error,
        skipped = f.skipped + d.skipped, missing = f.missing + d.missing
    FROM parity_cell_deltas d
    WHERE f.backend_id = d.backend_id AND f.file = d.file;
    INSERT INTO {cell} (project_id, backend_id, file, passed, failed, error, skipped, missing)
    SELECT %(project)s, d.backend_id, d.file, d.passed, d.failed, d.error, d.skipped, d.missing
    FROM parity_cell_deltas d
    WHERE NOT EXISTS (
        SELECT 1 FROM {cell} f WHERE f.backend_id = d.backend_id AND f.file = d.file
    );
    DELETE FROM {cell} f USING parity_cell_deltas d
    WHERE f.backend_id = d.backend_id AND f.file = d.file
      AND f.passed + f.failed + f.error + f.skipped + f.missing = 0;
    """,
    test=TestCase,
    cell=FileCell,
    fence=FENCE,
)


def file_cells_write(
    *,
    project_id: int,
    backend_ids: list[int],
    outcomes_changed: Collection[int] | None = None,
    deltas: bool = False,
) -> None:
    """The heatmap cells of ``backend_ids``; ``outcomes_changed``: those of them whose current
    outcomes may have changed (all, when not given), the others' missing counts only.
    ``deltas``: the gap diff was scoped (``scope.Scope.table``) and ``outcomes_changed``'s
    outcomes changed by ``parity_outcome_changes`` alone: the cells move by what moved."""
    changed = [b for b in backend_ids if outcomes_changed is None or b in outcomes_changed]
    unchanged = [b for b in backend_ids if b not in changed]
    params = {**OUTCOME_PARAMS, "project": project_id}
    if deltas and outcomes_changed is not None:
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(_FILE_CELL_DELTAS_SQL, {**params, "changed": changed})
            return
        except IntegrityError:
            # A count would go below zero: the cells were not what a recount gives (written
            # by hand, or by a bug). Recounted, rather than failing every recompute after.
            logger.warning("file cells of backends %s drifted: recounted", backend_ids)
    with connection.cursor() as cursor, hash_joins(cursor):
        if changed:
            cursor.execute(_FILE_CELLS_SQL, {**params, "backends": changed})
        if unchanged:
            cursor.execute(_FILE_CELLS_MISSING_SQL, {**params, "backends": unchanged})


# Each file's seconds in each of the backend's last few complete default-branch runs whose
# results are kept, averaged: one slow night does not reshuffle every shard. The writer summed
# each upload's seconds per file (``FileSeconds``), so this reads a few rows per file, not the
# runs' results. Each run's rows are read by a lateral probe (grouped, so Postgres cannot fold
# it into a join): the probe reads only that run's day partition, where a join of the runs and
# the table would read every day's.
RECENT_RUNS_FOR_DURATIONS = 3
_FILE_DURATIONS_SQL = model_sql(
    """
    WITH recent AS (
        SELECT r.id FROM {run} r JOIN {project} p ON p.id = r.project_id
        WHERE r.backend_id = %(backend)s AND r.complete AND r.results_expired_at IS NULL
          AND {may_be_current}
        ORDER BY r.started_at DESC, r.id DESC
        LIMIT %(runs)s
    ), per_run AS (
        SELECT s.file, s.seconds FROM recent CROSS JOIN LATERAL (
            SELECT file, sum(seconds) AS seconds FROM {seconds}
            WHERE run_id = recent.id GROUP BY file
        ) s
    ), durations AS (
        SELECT file, avg(seconds) AS seconds FROM per_run GROUP BY file
    )
    UPDATE {cell} f SET duration = d.seconds
    FROM {cell} c LEFT JOIN durations d ON d.file = c.file
    WHERE c.id = f.id AND f.backend_id = %(backend)s
      AND f.duration IS DISTINCT FROM d.seconds
    """,
    run=Run,
    project=Project,
    may_be_current=may_be_current_sql("r", sql.SQL("p.default_branch")),
    seconds=FileSeconds,
    cell=FileCell,
)


def file_durations_write(*, backend_ids: list[int]) -> None:
    """Set each file cell's ``duration`` from the backend's recent complete runs."""
    with connection.cursor() as cursor:
        for backend_id in backend_ids:
            cursor.execute(
                _FILE_DURATIONS_SQL, {"backend": backend_id, "runs": RECENT_RUNS_FOR_DURATIONS}
            )


# The day's counts replace any earlier run of the same day. A reason the backend's previous
# day had and this run lacks gets an explicit 0, so its trend line drops instead of stopping.
_REASON_DAILY_SQL = model_sql(
    """
    DELETE FROM {daily} WHERE backend_id = %(backend)s AND day = %(day)s;
    INSERT INTO {daily} (project_id, reason_id, backend_id, day, count)
    SELECT %(project)s, x.reason_id, %(backend)s, %(day)s, count(*) FILTER (WHERE x.now)
    FROM (
        SELECT reason_id, true AS now FROM {current}
        WHERE backend_id = %(backend)s AND reason_id IS NOT NULL
        UNION ALL
        SELECT reason_id, false FROM {daily}
        WHERE backend_id = %(backend)s AND count > 0 AND day = (
            SELECT max(day) FROM {daily} WHERE backend_id = %(backend)s AND day < %(day)s
        )
    ) x
    GROUP BY x.reason_id;
    """,
    current=CurrentOutcome,
    daily=ReasonDaily,
)


def reason_daily_write(*, run: Run) -> None:
    """Count the reasons of ``run``, its backend's current run, on the day it ran (UTC)."""
    params = {
        "project": run.project_id,
        "backend": run.backend_id,
        "day": run.started_at.astimezone(datetime.UTC).date(),
    }
    with connection.cursor() as cursor:
        cursor.execute(_REASON_DAILY_SQL, params)
