"""A project's backend-suffix pattern: one logical test joins across backends, and a bad pattern
is refused at write time with the part at fault named."""

import pytest

from parity.pure.normalize import RulesError, rules_from_dict, rules_to_dict, validate_rules
from parity.pure.normalize.ids import TestIdentifier, backend_of, test_identity

SQLALCHEMY = {
    "device_tokens": [],
    "class_suffixes": {},
    "backend_pattern": {"class": r"_(?P<backend>(?:postgresql|sqlite|mysql)\+\w+)$"},
}
PAIRED = {
    "device_tokens": [],
    "class_suffixes": {},
    "backend_pattern": {
        "class": r"(?P<backend>CUDA|CPU|XPU)$",
        "name": r"_(?P<backend>cuda|cpu|xpu)(?=_|$)",
    },
}


def key(classname: str, name: str, rules: dict, file: str | None = None) -> str:
    return test_identity(
        classname=classname, name=name, file=file, folder_hint=None, rules=validate_rules(rules)
    ).key


def test_a_class_pattern_joins_sqlalchemys_per_database_classes():
    names = [
        "test.dialect.test_suite.ComponentReflectionTest_postgresql+psycopg2_15_20",
        "test.dialect.test_suite.ComponentReflectionTest_sqlite+pysqlite_3_45",
        "test.dialect.test_suite.ComponentReflectionTest",
    ]
    keys = {key(classname, "test_get_multi_columns", SQLALCHEMY) for classname in names}
    assert keys == {"test/dialect/test_suite.py::ComponentReflectionTest::test_get_multi_columns"}


def test_without_the_pattern_the_databases_stay_apart():
    rules = {**SQLALCHEMY, "backend_pattern": {}}
    names = [
        "test.dialect.test_suite.ComponentReflectionTest_postgresql+psycopg2_15_20",
        "test.dialect.test_suite.ComponentReflectionTest_sqlite+pysqlite_3_45",
    ]
    assert len({key(classname, "test_x", rules) for classname in names}) == 2


def test_a_paired_pattern_strips_only_when_class_and_name_name_one_backend():
    assert key("test.test_ops.TestOpsCUDA", "test_add_cuda_float32", PAIRED) == (
        "test/test_ops.py::TestOps::test_add_float32"
    )
    assert key("test.test_ops.TestOpsXPU", "test_add_xpu_float32", PAIRED) == (
        "test/test_ops.py::TestOps::test_add_float32"
    )
    # A generic class keeps a device word in a name, and a device class a name without one.
    assert key("test.test_ops.TestOps", "test_add_cuda_float32", PAIRED) == (
        "test/test_ops.py::TestOps::test_add_cuda_float32"
    )
    assert key("test.test_ops.TestOpsCUDA", "test_graphs", PAIRED) == (
        "test/test_ops.py::TestOpsCUDA::test_graphs"
    )
    # Class and name naming two backends: neither is stripped.
    assert key("test.test_ops.TestOpsCUDA", "test_copy_cpu", PAIRED) == (
        "test/test_ops.py::TestOpsCUDA::test_copy_cpu"
    )


def test_a_name_pattern_alone_strips_every_name():
    rules = {"device_tokens": [], "class_suffixes": {}, "backend_pattern": {
        "name": r" \[(?P<backend>chromium|firefox|webkit)\]$"
    }}  # fmt: skip
    assert key("tests/login.spec.ts", "logs in [firefox]", rules) == key(
        "tests/login.spec.ts", "logs in [chromium]", rules
    )
    assert key("tests/login.spec.ts", "logs in [firefox]", rules) == "tests/login.spec.ts::logs in"


def test_a_prefix_pattern_goes_before_the_classname_is_read_as_module_and_class():
    rules = {"backend_pattern": {"class": r"^(?P<backend>postgresql|sqlite3)\."}}
    assert key("postgresql.tests.test_models.BookTest", "test_str", rules) == (
        "tests/test_models.py::BookTest::test_str"
    )


def test_ingest_and_a_single_lookup_agree_case_by_case():
    rules = validate_rules(PAIRED)
    identify = TestIdentifier(rules)
    cases = [
        ("test.test_ops.TestOpsCUDA", "test_add_cuda_float32"),
        ("test.test_ops.TestOpsCUDA", "test_graphs"),
        ("test.test_ops.TestOps", "test_add_cuda"),
    ]
    for classname, name in cases:
        fields = {"classname": classname, "name": name, "file": None, "folder_hint": None}
        assert identify(**fields) == test_identity(**fields, rules=rules)


def test_the_backend_dropped_is_reported():
    rules = validate_rules(SQLALCHEMY)
    fields = {"name": "test_x", "file": None, "folder_hint": None, "rules": rules}
    classname = "test.dialect.test_suite.ComponentReflectionTest_mysql+mysqldb_8_0"
    assert backend_of(classname=classname, **fields) == "mysql+mysqldb_8_0"
    assert backend_of(classname="test.dialect.test_suite.ComponentReflectionTest", **fields) is None
    default = {"file": None, "folder_hint": None, "rules": validate_rules({})}
    assert backend_of(classname="TestOpsXLA", name="test_add_xla_float32", **default) == "xla"


@pytest.mark.parametrize(
    ("pattern", "field", "says"),
    [
        ({"class": "_(?:cuda|cpu)$"}, "backend_pattern.class", "has no group named 'backend'"),
        ({"name": "_(?P<backend>cuda"}, "backend_pattern.name", "invalid regular expression"),
        ({"name": "(?P<backend>x?)"}, "backend_pattern.name", "matches an empty name"),
        ({"klass": "(?P<backend>x)"}, "backend_pattern.klass", "unknown key"),
        ({"class": 3}, "backend_pattern.class", "expected a regular expression"),
        ("_cuda$", "backend_pattern", "expected a mapping"),
    ],
)
def test_a_bad_pattern_is_refused_naming_what_is_wrong(pattern, field, says):
    with pytest.raises(RulesError) as caught:
        validate_rules({"backend_pattern": pattern})
    assert caught.value.field == field
    assert says in str(caught.value)


def test_rules_with_a_pattern_round_trip_through_their_data():
    rules = validate_rules(PAIRED)
    assert rules_from_dict(rules_to_dict(rules)) == rules
    assert rules_to_dict(rules)["backend_pattern"] == PAIRED["backend_pattern"]
