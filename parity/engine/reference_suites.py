"""``ReferenceSuiteTest``: the suite each test of the reference's current run came in (its
upload's ``suite``). Rewritten where it changed each time the reference's current run is
recomputed: a nightly that names the same suites rewrites nothing; a test gone from the run, or
one now in no named suite, loses its row. Only the reference's: every backend is compared with
it, so its suites say which suite a gap's test belongs to (docs/suites.md)."""

from django.db import connection

from parity.models import ReferenceSuiteTest, Result, Upload
from parity.models.sql import model_sql

# A test run in two suites of the run keeps the first by name: one row a test, stable.
_FOUND = """
    SELECT DISTINCT ON (r.test_id) r.test_id, u.suite
    FROM {result} r JOIN {upload} u ON u.id = r.upload_id
    WHERE r.run_id = %(run)s AND u.suite <> ''
    ORDER BY r.test_id, u.suite
"""

_FORGET = model_sql(
    """
    DELETE FROM {suite} s WHERE s.project_id = %(project)s
      AND NOT EXISTS (
        SELECT 1 FROM {result} r JOIN {upload} u ON u.id = r.upload_id
        WHERE r.run_id = %(run)s AND r.test_id = s.test_id AND u.suite <> '')
    """,
    suite=ReferenceSuiteTest,
    result=Result,
    upload=Upload,
)

_WRITE = model_sql(
    f"""
    INSERT INTO {{suite}} AS s (test_id, project_id, suite)
    SELECT f.test_id, %(project)s, f.suite FROM ({_FOUND}) f
    ON CONFLICT (test_id) DO UPDATE SET suite = EXCLUDED.suite
      WHERE s.suite <> EXCLUDED.suite
    """,
    suite=ReferenceSuiteTest,
    result=Result,
    upload=Upload,
)

_CLEAR = model_sql("DELETE FROM {suite} WHERE project_id = %(project)s", suite=ReferenceSuiteTest)


def reference_suites_write(*, project_id: int, run_id: int | None) -> None:
    """The suites of the tests of ``run_id``, the reference's current run (None: it has none,
    and no test has a suite)."""
    named = run_id is not None and Upload.objects.filter(run_id=run_id).exclude(suite="").exists()
    params = {"project": project_id, "run": run_id}
    with connection.cursor() as cursor:
        if not named:  # a run whose uploads name no suite: the reads fold nothing
            cursor.execute(_CLEAR, params)
            return
        cursor.execute(_FORGET, params)
        cursor.execute(_WRITE, params)
