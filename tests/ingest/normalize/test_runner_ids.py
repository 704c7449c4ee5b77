"""A runner's test IDs before a run get the canonical identity ingest gives its report after."""

import pytest

from ingest.normalize import test_identity
from ingest.normalize.runner_ids import RunnerIdError, runner_fields, runner_identity

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
    ("item", "says"),
    [(12, "string"), ("", "empty"), ({"classname": "A"}, "'name'"), ({"name": 3}, "'name'")],
)
def test_items_naming_no_test_are_refused(item, says):
    with pytest.raises(RunnerIdError, match=says):
        runner_fields(item)
