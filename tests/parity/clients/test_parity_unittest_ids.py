"""Every test the unittest runner reports keeps its own identity (issue 22, item 5).

``fixtures/doctest_suite`` is shaped like more-itertools: a library under ``src/`` whose
docstrings are doctests, loaded by ``tests/test_more.py``'s ``load_tests`` with
``doctest.DocTestSuite``, beside a TestCase with subTests, classes a function and ``type()``
generate (two of which unittest's ``id()`` names alike), a ``FunctionTestCase`` and a module
that fails to import, loaded by name. Run as a script, unittest itself counts the tests; the
runner's report must hold as many, each under its own name and a file relative to the
repository, and ingest must store as many distinct tests.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from parity.models import TestCase
from parity.pure.junit import iter_cases
from tests.parity.clients.conftest import (
    CLIENTS_DIR,
    FIXTURES_DIR,
    clean_environment,
    python38,
)
from tests.parity.clients.reports import junit_outcomes

SCRIPT = "tests/test_more.py"
RUN_SECONDS = 120
DOCTESTS = {
    "src/toolbox/more.py::toolbox.more.chunked": "passed",
    "src/toolbox/more.py::toolbox.more.first": "passed",
    "src/toolbox/more.py::toolbox.more.Window": "passed",
    "src/toolbox/more.py::toolbox.more.Window.width": "passed",
}


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("repo") / "doctest_suite"
    shutil.copytree(FIXTURES_DIR / "doctest_suite", folder)
    return folder


@pytest.fixture(scope="module")
def unittest_count(suite) -> int:
    """How many tests unittest itself loads: ``python tests/test_more.py`` runs them."""
    done = _run(suite, SCRIPT)
    ran = re.search(r"^Ran (\d+) tests?", done.stderr, re.MULTILINE)
    assert ran, done.stderr
    return int(ran.group(1))


@pytest.fixture(scope="module")
def report(suite) -> Path:
    done = _run(suite, "-m", "parity_unittest", SCRIPT, "--junit-xml", "reports/unittest.xml")
    assert done.returncode == 1, done.stderr  # the module that cannot be imported fails it
    return suite / "reports/unittest.xml"


def _run(suite: Path, *args: str, python: str = sys.executable) -> subprocess.CompletedProcess:
    return subprocess.run(
        [python, *args],
        cwd=suite,
        env=clean_environment(PYTHONPATH=str(CLIENTS_DIR)),
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
        check=False,
    )


def _cases(report: Path) -> list:
    with report.open("rb") as stream:
        return list(iter_cases(stream))


def test_the_report_holds_every_test_unittest_loads(report, unittest_count):
    assert unittest_count == 11
    assert len(_cases(report)) == unittest_count
    assert len(junit_outcomes(report)) == unittest_count  # distinct canonical IDs


def test_each_doctest_is_its_own_test_named_by_its_docstring(report):
    outcomes = junit_outcomes(report)

    assert {key: outcomes[key][0] for key in DOCTESTS if key in outcomes} == DOCTESTS
    doctest = next(c for c in _cases(report) if c.name == "toolbox.more.chunked")
    assert (doctest.classname, doctest.file) == ("toolbox.more", "src/toolbox/more.py")


def test_generated_classes_subtests_and_failed_imports_are_named_apart(report):
    outcomes = junit_outcomes(report)

    assert set(outcomes) - set(DOCTESTS) == {
        "tests/test_more.py::TestChunked::test_sizes",
        "tests/test_more.py::TestWindow1::test_width",
        "tests/test_more.py::TestWindow2::test_width",
        "tests/test_more.py::TestWindowType1::test_width",
        "tests/test_more.py::TestWindowType2::test_width",
        "tests/test_more.py::check_first_of_nothing",
        "tests/needs_missing_module.py::needs_missing_module",
    }
    failed_import = outcomes["tests/needs_missing_module.py::needs_missing_module"]
    assert failed_import[0] == "error"
    assert "toolbox_extension_that_is_not_installed" in failed_import[1]


def test_every_file_is_relative_to_the_repository_and_none_is_doctest_py(report):
    files = [case.file for case in _cases(report)]

    assert all(files), files
    assert not [file for file in files if file.startswith("/") or ".." in file], files
    assert not [file for file in files if file.endswith(("doctest.py", "loader.py"))], files
    assert b"doctest.py" not in report.read_bytes()


def test_a_root_names_files_relative_to_it(suite):
    done = _run(
        suite.parent, "-m", "parity_unittest", f"{suite.name}/{SCRIPT}",
        "--root", suite.name, "--junit-xml", "root.xml",
    )  # fmt: skip

    assert "Ran 11 tests" in done.stderr, done.stderr
    assert "src/toolbox/more.py::toolbox.more.chunked" in junit_outcomes(suite.parent / "root.xml")


def test_python_3_8_names_them_alike(suite, report):
    python = python38()
    if python is None:
        pytest.skip("no Python 3.8 here (PARITY_TEST_PYTHON38, python3.8 or pyenv's 3.8)")

    args = ("-m", "parity_unittest", SCRIPT, "--junit-xml", "reports/py38.xml")
    done = _run(suite, *args, python=python)

    assert done.returncode == 1, done.stderr
    old = [(c.classname, c.name, c.file) for c in _cases(suite / "reports/py38.xml")]
    assert old == [(c.classname, c.name, c.file) for c in _cases(report)]


@pytest.mark.django_db
def test_ingest_stores_as_many_distinct_tests_as_unittest_loads(report, unittest_count, ingest):
    reply = ingest(("unittest.xml", report.read_bytes()), backend="cpu")

    assert reply.status_code == 202, reply.content
    stored = list(TestCase.objects.values_list("key", "file"))
    assert len(stored) == unittest_count
    assert not [file for _, file in stored if not file or file.startswith("/")], stored
    assert {key for key, _ in stored} >= set(DOCTESTS)
