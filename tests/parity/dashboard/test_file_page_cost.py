"""The file page's cost follows the file's tests, not the project's (issue 23, item 7): every
query it sends reads rows of the file only, by index, however many tests the rest of the
project holds. Checked on each query's real plan (``EXPLAIN ANALYZE``), with thousands of tests in
other files and a handful in the file shown: a plan that scans a table of the project (a
sequential scan, a join over every current outcome or gap) touches thousands of rows and fails.

The project's small tables (its backends, reasons, runs) may be scanned whole: they do not grow
with the tests."""

import json

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

SHOWN = "test/test_shown.py"
SHOWN_TESTS = 6
OTHER_TESTS = 3000  # in 30 other files
BACKENDS = 4
# Rows any step of a plan may touch: a few per cell of the page's grid (tests x backends).
BOUND = 10 * SHOWN_TESTS * BACKENDS


def cases(backend: str) -> dict:
    shown = {f"{SHOWN}::TestShown::test_{n}": "passed" for n in range(SHOWN_TESTS)}
    if backend != "cpu":
        shown[f"{SHOWN}::TestShown::test_0"] = ("skipped", "not on this backend")
        shown[f"{SHOWN}::TestShown::test_1"] = ("failed", "boom")
    other = {
        f"test/other_{n // 100}.py::TestOther::test_{n}": (
            ("skipped", "later") if backend != "cpu" and n % 3 == 0 else "passed"
        )
        for n in range(OTHER_TESTS)
    }
    return {**shown, **other}


def rows_touched(node: dict) -> list[tuple[int, str]]:
    """Each plan node's rows read or produced (over all its loops), with what it was."""
    loops = node.get("Actual Loops", 1)
    rows = node.get("Actual Rows", 0) + sum(
        node.get(key, 0)
        for key in (
            "Rows Removed by Filter",
            "Rows Removed by Index Recheck",
            "Rows Removed by Join Filter",
        )
    )
    label = f"{node['Node Type']} {node.get('Relation Name', '')}".strip()
    found = [(rows * loops, label)]
    for child in node.get("Plans", []):
        found += rows_touched(child)
    return found


@pytest.mark.django_db(transaction=False)
def test_the_file_pages_queries_read_only_the_files_rows(upload_run):
    for backend in ("cpu", "gpu", "tpu", "neuron"):
        upload_run(backend, cases(backend), day="2026-04-01")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # the planner sees the tables as big as they are

    with CaptureQueriesContext(connection) as queries:
        response = Client().get(f"/p/pytorch-xla/file/?path={SHOWN}&backend=tpu")
    assert response.status_code == 200
    assert len(response.context["grid"].rows) == SHOWN_TESTS

    too_many = []
    with connection.cursor() as cursor:
        for query in queries.captured_queries:
            sql = query["sql"]
            if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
                continue
            cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}")
            plan = cursor.fetchone()[0]
            plan = json.loads(plan) if isinstance(plan, str) else plan
            for rows, label in rows_touched(plan[0]["Plan"]):
                if rows > BOUND:
                    too_many.append(f"{rows} rows: {label}\n    in {sql[:300]}")
    assert not too_many, "\n".join(too_many)
