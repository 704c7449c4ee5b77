"""The backend matrix (``parity.selectors.matrix``): every pair's file and test overlap and the
tests passing on one and not the other, against a count by hand; and a pair's lists.

    file   cpu (reference)      tpu                  neuron         gpu
    f1     t1, t2 pass          t1 pass, t2 skipped  -              no run
    f2     t1 pass              -                    t1 failed
    f3     t1 skipped           -                    t1 passes
    f4     -                    t1 pass              -
"""

import pytest

from parity import selectors
from parity.models import Project
from tests.parity.dashboard_scenario import DAY1

F1, F2, F3, F4 = "test/f1.py", "test/f2.py", "test/f3.py", "test/f4.py"


def tid(file: str, name: str) -> str:
    return f"{file}::TestF::{name}"


RUNS = {
    "cpu": {
        tid(F1, "test_1"): "passed",
        tid(F1, "test_2"): "passed",
        tid(F2, "test_1"): "passed",
        tid(F3, "test_1"): ("skipped", "needs two devices"),
    },
    "tpu": {
        tid(F1, "test_1"): "passed",
        tid(F1, "test_2"): ("skipped", "not on TPU"),
        tid(F4, "test_1"): "passed",
    },
    "neuron": {
        tid(F2, "test_1"): ("failed", "AssertionError"),
        tid(F3, "test_1"): "passed",
    },
}


@pytest.fixture
def runs(upload_run, xla) -> Project:
    for backend, cases in RUNS.items():
        upload_run(backend, cases, day=DAY1)
    return xla


def numbers(matrix, a: str, b: str) -> tuple:
    cell = matrix.pair(a, b)
    return (
        (cell.files.a, cell.files.b, cell.files.both, cell.files.only_a),
        (cell.tests.a, cell.tests.b, cell.tests.both),
        cell.passes_a_not_b,
    )


def test_every_pair_in_three_queries(runs, django_assert_num_queries):
    with django_assert_num_queries(3):
        matrix = selectors.backend_matrix(project=runs)

    assert matrix.backends == ["cpu", "gpu", "neuron", "tpu"] and matrix.reference == "cpu"
    assert [(t.backend, t.files, t.tests, t.passing) for t in matrix.totals] == [
        ("cpu", 3, 4, 3),
        ("gpu", 0, 0, 0),
        ("neuron", 2, 2, 1),
        ("tpu", 2, 3, 2),
    ]
    # (files: a, b, both, only on a), (tests: a, b, both), tests passing on a and not on b
    assert numbers(matrix, "cpu", "tpu") == ((3, 2, 1, 2), (4, 3, 2), 2)  # f1::t2 skipped, f2
    assert numbers(matrix, "tpu", "cpu") == ((2, 3, 1, 1), (3, 4, 2), 1)  # f4
    assert numbers(matrix, "cpu", "neuron") == ((3, 2, 2, 1), (4, 2, 2), 3)  # f1 x2, f2 failed
    assert numbers(matrix, "neuron", "cpu") == ((2, 3, 2, 0), (2, 4, 2), 1)  # f3 skipped on cpu
    assert numbers(matrix, "tpu", "neuron") == ((2, 2, 0, 2), (3, 2, 0), 2)
    assert numbers(matrix, "gpu", "cpu") == ((0, 3, 0, 0), (0, 4, 0), 0)
    cpu_tpu = matrix.pair("cpu", "tpu")
    assert (cpu_tpu.files.jaccard, cpu_tpu.tests.jaccard) == (1 / 4, 2 / 5)
    assert cpu_tpu.files.a_also_on_b == 1 / 3
    assert matrix.pair("tpu", "neuron").files.jaccard == 0.0
    assert matrix.pair("cpu", "cpu") is None  # the diagonal holds the totals


def test_a_deleted_backends_id_left_in_a_row_is_no_column(runs):
    """A ``PresenceBlock`` row may name a backend deleted in raw SQL (Django cascades its own
    deletes, not those): the matrix keeps the project's backends only."""
    from django.db import connection

    before = selectors.backend_matrix(project=runs)
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO parity_presenceblock (backend_id, block, present, passing)"
            " SELECT 999999, block, bit_or(present), bit_or(passing) FROM parity_presenceblock"
            " GROUP BY block"
        )
    assert selectors.backend_matrix(project=runs) == before
    assert numbers(before, "cpu", "neuron") == ((3, 2, 2, 1), (4, 2, 2), 3)


def test_a_backend_with_no_run_overlaps_nothing(xla):
    matrix = selectors.backend_matrix(project=xla)

    assert all(t.files == t.tests == 0 for t in matrix.totals)
    assert matrix.pair("cpu", "tpu").files.jaccard is None  # nothing on either: no share


def test_a_pairs_lists_both_ways(runs, django_assert_num_queries):
    with django_assert_num_queries(3):
        pair = selectors.backend_pair(project=runs, a="cpu", b="neuron")

    assert (pair.files_only_a, pair.files_only_b) == ([F1], [])
    assert [(t.test, t.there) for t in pair.passes_only_a] == [
        (tid(F1, "test_1"), None),
        (tid(F1, "test_2"), None),
        (tid(F2, "test_1"), "failed"),
    ]
    assert [(t.test, t.file, t.there) for t in pair.passes_only_b] == [
        (tid(F3, "test_1"), F3, "skipped")
    ]
    assert (pair.passes_only_a_count, pair.passes_only_b_count) == (3, 1)


def test_a_pairs_test_lists_stop_at_the_limit_and_count_them_all(runs):
    pair = selectors.backend_pair(project=runs, a="cpu", b="neuron", limit=1)

    assert [t.test for t in pair.passes_only_a] == [tid(F1, "test_1")]
    assert pair.passes_only_a_count == 3
