"""The writer's look-ups of known tests cost what the files asked for hold, whatever Postgres's
statistics say: a new project's first upload lands after the last ANALYZE, and planned on that,
a look-up read every test of the project and filtered them by file, a cost that grew with
the project rather than with the upload."""

import hashlib
import json

from django.db import connection
from psycopg2 import sql

from ingest.writer.known import TESTS_BY_DIGEST, TESTS_OF_FILES

FILES, PER_FILE = 1_000, 40


def _tests_written_after_analyze(project) -> None:
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE parity_testcase")  # the project has no test yet
        cursor.execute(
            """
            INSERT INTO parity_testcase (project_id, key, file, class_name, name)
            SELECT %(project)s, 'test/f' || (g %% %(files)s) || '.py::T::t' || g,
                   'test/f' || (g %% %(files)s) || '.py', 'T', 't' || g
            FROM generate_series(1, %(tests)s) g
            """,
            {"project": project.pk, "files": FILES, "tests": FILES * PER_FILE},
        )


def _rows_read(statement, params) -> int:
    """Every row the plan's scans produced or filtered out."""
    with connection.cursor() as cursor:
        cursor.execute(sql.SQL("EXPLAIN (ANALYZE, FORMAT JSON) {}").format(statement), params)
        plan = cursor.fetchone()[0]
        plan = plan if isinstance(plan, list) else json.loads(plan)

    def walk(node) -> int:
        own = 0
        if "Scan" in node["Node Type"] and node["Node Type"] != "Function Scan":
            own = (node["Actual Rows"] + node.get("Rows Removed by Filter", 0)) * node[
                "Actual Loops"
            ]
        return own + sum(walk(child) for child in node.get("Plans", []))

    return walk(plan[0]["Plan"])


def test_a_look_up_of_files_reads_their_tests_only(project):
    _tests_written_after_analyze(project)
    files = [f"test/f{n}.py" for n in range(0, FILES, 5)]  # a batch of a many-file report
    params = {"project": project.pk, "files": files, "limit": 10_000}
    assert _rows_read(TESTS_OF_FILES, params) <= 2 * len(files) * PER_FILE


def test_a_look_up_of_digests_reads_their_tests_only(project):
    _tests_written_after_analyze(project)
    keys = [f"test/f{n % FILES}.py::T::t{n}" for n in range(1, 40)]
    params = {
        "project": project.pk,
        "files": [key.split("::")[0] for key in keys],
        "digests": [hashlib.md5(key.encode()).hexdigest() for key in keys],
    }
    assert _rows_read(TESTS_BY_DIGEST, params) <= 2 * len(keys)
