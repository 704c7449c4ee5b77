"""Probe runs: a backend's run with its exempted tests run too (``pytest --parity-probe``,
``parity_unittest --probe``, uploaded with ``probe=true``). A probe run is never current and
moves no parity number or gap; when one completes, this records per exemption how the tests it
covers did (``ProbeOutcome``), so an exemption whose tests all pass now can be removed.

Set-based: the run's outcomes go into a temporary table once, and every exemption of the
backend is matched against them by ``parity.definitions.triage_candidates``, the engine's own
matching (a test, a file, a class in any file, a glob)."""

import logging

from django.db import connection, transaction

from parity.definitions import OUTCOME_PARAMS, TRIAGE_IN_FORCE, run_outcomes, triage_candidates
from parity.models import ProbeOutcome, Run, TestCase, Triage
from parity.models.projects import project_lock
from parity.models.sql import model_sql

logger = logging.getLogger(__name__)

# Exemptions CI applies (a test or a pattern, not a reason; unexpired) on the backend, each
# with its covered tests' outcomes in the run; one with none of its tests in the run gets a
# row of zeros ("not run": the file crashed, timed out, or the probe left it out).
_PROBE_SQL = model_sql(
    """
    DROP TABLE IF EXISTS parity_probe_rows;
    CREATE TEMP TABLE parity_probe_rows ON COMMIT DROP AS
    SELECT o.test_id, %(backend)s::bigint AS backend_id, o.outcome, o.reason_id,
           tc.key AS test_key, tc.file AS test_file
    FROM ({outcomes}) o JOIN {testcase} tc ON tc.id = o.test_id;
    ANALYZE parity_probe_rows;
    DELETE FROM {probe} WHERE backend_id = %(backend)s;
    INSERT INTO {probe}
        (project_id, triage_id, backend_id, run_id, at, tests, passed, failed, error, skipped)
    SELECT %(project)s, t.id, %(backend)s, %(run)s, %(at)s, count(r.test_id),
           count(*) FILTER (WHERE r.outcome = %(passed)s),
           count(*) FILTER (WHERE r.outcome = %(failed)s),
           count(*) FILTER (WHERE r.outcome = %(error)s),
           count(*) FILTER (WHERE r.outcome = %(skipped)s)
    FROM {triage} t
    LEFT JOIN (SELECT DISTINCT triage_id, test_id FROM ({candidates}) c) c
      ON c.triage_id = t.id
    LEFT JOIN parity_probe_rows r ON r.test_id = c.test_id
    WHERE t.project_id = %(project)s AND (t.test_id IS NOT NULL OR t.match <> '')
      AND {unexpired}
      AND (NOT EXISTS (SELECT 1 FROM {backends} tb WHERE tb.triage_id = t.id)
           OR EXISTS (SELECT 1 FROM {backends} tb
                      WHERE tb.triage_id = t.id AND tb.backend_id = %(backend)s))
    GROUP BY t.id
    """,
    outcomes=run_outcomes("run"),
    testcase=TestCase,
    probe=ProbeOutcome,
    triage=Triage,
    backends=Triage.backends.through,
    candidates=triage_candidates("parity_probe_rows", "test_id"),
    unexpired=TRIAGE_IN_FORCE,
)


def latest_probe_run(*, run: Run) -> Run | None:
    """The backend's latest complete probe run, by when CI ran it."""
    return (
        Run.objects.filter(backend_id=run.backend_id, probe=True, complete=True)
        .order_by("-started_at", "-pk")
        .first()
    )


def probe_outcomes_write(*, run: Run) -> int | None:
    """Record how each exemption's tests did in probe run ``run``; None when a newer probe run
    of the backend has already been recorded (this one completed late). Returns the number of
    exemptions recorded. Idempotent."""
    with transaction.atomic():
        project_lock(project_id=run.project_id)  # one writer of a project's roll-ups at a time
        latest = latest_probe_run(run=run)
        if latest is None or latest.pk != run.pk:
            logger.info("probe run %s is not its backend's latest: not recorded", run.pk)
            return None
        params = {
            **OUTCOME_PARAMS,
            "project": run.project_id,
            "backend": run.backend_id,
            "run": run.pk,
            "at": run.started_at,
        }
        with connection.cursor() as cursor:
            cursor.execute(_PROBE_SQL, params)
            recorded = cursor.rowcount
    logger.info("probe run %s: %s exemptions of backend %s", run.pk, recorded, run.backend_id)
    return recorded
