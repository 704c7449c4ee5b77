"""A recompute's statements do not grow with its tests: no per-test (or per-file) work, at the
sizes users run (100k tests), on real Postgres.

Tests and results go straight into the tables in bulk SQL (the writer is not what this is
about); the recomputes are the engine's own, counted by Django's query capture, for a small
project and one of 100k tests, through the same sequence: the reference's first completion, a
backend's first, the next night of each (the reference moving on), and a nightly.
"""

import datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from parity.engine import parity_recompute
from parity.models import Run, Upload
from parity.services.projects import project_create

LARGE = 100_000
SMALL = 2_000
START = datetime.datetime(2026, 3, 1, 2, tzinfo=datetime.UTC)

_TESTS_SQL = """
INSERT INTO parity_testcase (project_id, key, file, class_name, name, created_at)
SELECT %(project)s, format('test/test_%%s.py::TestX::test_%%s', k / 100, k),
       format('test/test_%%s.py', k / 100), 'TestX', format('test_%%s', k), now()
FROM generate_series(0, %(tests)s - 1) AS k
"""

# The reference skips 2%; tpu leaves out one file in five, skips 6% and fails 1%; each night
# a different 0.5% fails once.
_RESULTS_SQL = """
INSERT INTO parity_result (run_id, upload_id, test_id, outcome, duration, message)
SELECT %(run)s, %(upload)s, t.id,
       CASE WHEN (t.k * 7 + %(night)s * 131) %% 200 = 0 THEN 3
            WHEN NOT %(accelerator)s THEN CASE WHEN t.k %% 50 = 0 THEN 2 ELSE 1 END
            WHEN t.k %% 100 < 6 THEN 2 WHEN t.k %% 97 = 1 THEN 3 ELSE 1 END,
       0.01, ''
FROM (
    SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM parity_testcase
    WHERE project_id = %(project)s
) t
WHERE NOT %(accelerator)s OR (t.k / 100) %% 5 <> 1
"""


def _project(slug: str, tests: int):
    project = project_create(slug=slug, backends=["cpu", "tpu"], reference="cpu")
    with connection.cursor() as cursor:
        cursor.execute(_TESTS_SQL, {"project": project.pk, "tests": tests})
    return project


def _run(project, backend: str, night: int) -> Run:
    started = START + datetime.timedelta(days=night, minutes=backend == "tpu")
    run = Run.objects.create(
        project=project,
        backend=project.backends.get(name=backend),
        key=f"{night}-{backend}",
        commit=f"{night:040x}",
        branch=project.default_branch,
        complete=True,
        started_at=started,
    )
    upload = Upload.objects.create(run=run, sha256=f"{run.pk:064x}", size=0, status="done")
    params = {
        "run": run.pk,
        "upload": upload.pk,
        "project": project.pk,
        "night": night,
        "accelerator": backend != "cpu",
    }
    with connection.cursor() as cursor:
        cursor.execute(_RESULTS_SQL, params)
    return run


def _statements(project) -> list[int]:
    """Statements of each recompute: cpu then tpu complete a night, twice."""
    counts = []
    for night in (1, 2):
        for backend in ("cpu", "tpu"):
            run = _run(project, backend, night)
            with CaptureQueriesContext(connection) as queries:
                assert parity_recompute(run=run) is not None
            counts.append(len(queries))
    return counts


# Far above what any statement takes at 100k (about a second on a loaded 2-core machine): a
# plan that loops over pairs of tests (minutes) is cancelled instead of hanging the suite.
STATEMENT_TIMEOUT = "60s"


@pytest.mark.django_db
def test_a_recompute_runs_as_many_statements_at_100k_tests_as_at_2k():
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL statement_timeout = %s", [STATEMENT_TIMEOUT])
    small = _statements(_project("small", SMALL))
    with connection.cursor() as cursor:
        # As autovacuum would have, long before a new project (or backend) arrives: statistics
        # that know the shared tables, but none of the new project's rows.
        cursor.execute("ANALYZE parity_currentoutcome, parity_gap, parity_testcase")
    large = _statements(_project("large", LARGE))

    assert large == small
    with connection.cursor() as cursor:  # the large project was what it says
        cursor.execute(
            "SELECT count(*) FROM parity_currentoutcome c JOIN parity_project p "
            "ON p.id = c.project_id WHERE p.slug = 'large'"
        )
        assert cursor.fetchone()[0] >= LARGE
