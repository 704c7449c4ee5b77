"""A test run in several suites of one report: its identity in each suite, and back."""

import pytest

from parity.pure.normalize import test_identity
from parity.pure.normalize.ids import make_key
from parity.pure.normalize.runner_ids import runner_identity
from parity.pure.normalize.suites import suite_of, suite_qualified


def _identity(classname: str, name: str, file: str | None = None):
    return test_identity(classname=classname, name=name, file=file, folder_hint=None)


def test_the_name_carries_the_label_and_the_key_is_rebuilt_from_the_parts():
    plain = _identity("FiltersTest::testFilterByNull", "testFilterByNull with data set #1")

    chrome = suite_qualified(plain, "FiltersTest / FiltersTest: chrome")

    assert (
        chrome.name
        == "testFilterByNull with data set #1 [suite: FiltersTest / FiltersTest: chrome]"
    )
    assert (chrome.file, chrome.class_name) == (plain.file, plain.class_name)
    assert chrome.key == make_key(chrome.file, chrome.class_name, chrome.name)
    assert chrome.key.startswith(plain.key)  # the class part keeps its escaping


def test_a_name_without_a_class_is_escaped_as_any_key_part_is():
    plain = _identity("", "ends with a colon:", file="t/x.spec.ts")

    qualified = suite_qualified(plain, "x.spec.ts @ webkit")

    assert plain.key == "t/x.spec.ts::ends with a colon:\\"
    assert qualified.key == "t/x.spec.ts::ends with a colon: [suite: x.spec.ts @ webkit]"


def test_each_label_gives_its_own_key_and_one_label_always_the_same():
    plain = _identity("example.spec.ts", "has title")
    keys = {suite_qualified(plain, label).key for label in ("a @ chromium", "a @ firefox", "")}

    assert len(keys) == 3
    assert plain.key not in keys
    assert suite_qualified(plain, "a @ chromium") == suite_qualified(plain, "a @ chromium")
    assert suite_qualified(plain, "").name == "has title [no suite]"


@pytest.mark.parametrize("label", ["a.spec.ts @ chromium", "outer / inner [x]", ""])
def test_suite_of_gives_back_the_runners_name_and_the_label(label):
    plain = _identity("T", "test_x[param]")

    assert suite_of(suite_qualified(plain, label).name) == ("test_x[param]", label)


@pytest.mark.parametrize("name", ["test_x", "test_x[chrome]", "test_x [chrome]", "[suite: a]"])
def test_a_name_no_suite_qualified_has_no_label(name):
    assert suite_of(name) == (name, None)


def test_a_runner_naming_the_qualified_test_resolves_to_its_key():
    """Device suffixes are stripped before the label, as at ingest."""
    reported = _identity(
        "__main__.TestViewOpsXLA", "test_view_xla_float32", "test/test_view_ops.py"
    )
    qualified = suite_qualified(reported, "TestOpsXLA @ tpu")

    assert qualified.name == "test_view_float32 [suite: TestOpsXLA @ tpu]"
    for item in (
        {
            "classname": "__main__.TestViewOpsXLA",
            "name": "test_view_xla_float32 [suite: TestOpsXLA @ tpu]",
            "file": "test/test_view_ops.py",
        },
        "test/test_view_ops.py::TestViewOpsXLA::test_view_xla_float32 [suite: TestOpsXLA @ tpu]",
    ):
        assert runner_identity(item).key == qualified.key
