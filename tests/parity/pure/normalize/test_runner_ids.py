"""A runner's test IDs before a run get the canonical identity ingest gives its report after."""

import pytest
from _pytest.junitxml import mangle_test_address

from parity.pure.normalize import TestIdentifier, test_identity
from parity.pure.normalize.runner_ids import RunnerIdError, runner_fields, runner_identity

CANONICAL = "test/test_view_ops.py::TestViewOps::test_view_float32"


@pytest.mark.parametrize(
    "item",
    [
        "test/test_view_ops.py::TestViewOpsXLA::test_view_xla_float32",
        "test.test_view_ops.TestViewOpsXLA.test_view_xla_float32",
        {
            "classname": "__main__.TestViewOpsXLA",
            "name": "test_view_xla_float32",
            "file": "test/test_view_ops.py",
        },
    ],
)
def test_three_dialects_give_the_canonical_id(item):
    assert runner_identity(item).key == CANONICAL


def test_a_pytest_id_reads_as_pytests_junit_report_of_it():
    reported = test_identity(
        classname="test.test_ops.TestOps", name="test_add[a::b]", file=None, folder_hint=None
    )

    assert runner_identity("test/test_ops.py::TestOps::test_add[a::b]") == reported
    assert runner_fields("test/test_fn.py::test_fn") == ("", "test_fn", "test/test_fn.py")
    assert runner_fields("t/x.py::Outer::Inner::test") == ("Outer.Inner", "test", "t/x.py")


@pytest.mark.parametrize(
    "node_id",
    [
        # SQLAlchemy's per-database classes, as its pytest plugin names them.
        "test/dialect/test_suite.py::ComponentReflectionTest_postgresql+psycopg2_15_20::test_get_multi_columns",
        "test/dialect/test_suite.py::ComponentReflectionTest_sqlite+pysqlite_3_45::test_get_indexes",
        "test/dialect/test_suite.py::ComponentReflectionTest::test_get_multi_columns",
        "test/dialect/test_suite.py::ComponentReflectionTest_mariadb+mysqldb-10.11.19::test_autoincrement_col",
        "test/orm/test_query.py::QueryTest::test_filter_by[postgresql+psycopg2]",
        "test/test_ops.py::TestOpsXLA::test_add_xla_float32",
    ],
)
def test_resolve_and_ingest_give_a_node_one_identity(node_id):
    # What the plugin sends the resolve API, and the <testcase> pytest's own JUnit writer makes
    # of the same node (no file=): both must name one test.
    *classes, name = mangle_test_address(node_id)
    ingested = TestIdentifier()(classname=".".join(classes), name=name, file=None, folder_hint=None)

    resolved = runner_identity(node_id)

    assert resolved == ingested
    assert resolved.file == node_id.partition("::")[0]


@pytest.mark.parametrize(
    ("item", "says"),
    [(12, "string"), ("", "empty"), ({"classname": "A"}, "'name'"), ({"name": 3}, "'name'")],
)
def test_items_naming_no_test_are_refused(item, says):
    with pytest.raises(RunnerIdError, match=says):
        runner_fields(item)
