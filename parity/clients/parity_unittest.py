"""Run script-style unittest suites with a backend's parity exemptions applied.

One file, Python 3.8 or newer, standard library only; it talks to the server through
``parity_ci.py``, which must sit beside it. For suites whose files are scripts ending in
``unittest.main()`` (PyTorch/XLA's ``python test/test_operations.py``)::

    curl -fsSO "$PARITY_URL/ci/parity_ci.py" -fsSO "$PARITY_URL/ci/parity_unittest.py"
    python -m parity_unittest test/test_operations.py test/test_ops.py \\
        --backend tpu --junit-xml test-reports/tpu.xml

Each script is imported as a module named after its path (``test.test_operations``, not
``__main__``, so its ``unittest.main()`` guard does not run), with its folder first on
``sys.path`` and ``sys.argv`` set as when it runs as a script. Its tests (PyTorch's
device-generic classes such as ``TestViewOpsXLA`` included) are sent once to the server's
resolve API as ``path::Class::method``; the server names them with the project's own rules, so
``TestViewOpsXLA::test_view_xla_float32`` matches an exemption written for
``TestViewOps::test_view_float32``. Then:

- a ``tracked`` or ``intended`` test is skipped, without running its ``setUp``, with the
  exemption's message ``<reason> (<issue URL>)``; a class whose tests are all skipped does not
  run its ``setUpClass`` either;
- a ``quarantine`` test runs; its failures and errors are reported as a skip with that message.

``--junit-xml FILE`` writes the results as JUnit XML (``classname="test.test_ops.TestOpsXLA"``
and ``file="test/test_ops.py"``) for ``parity_ci.py upload``: one test case per test unittest
loads, named as its ``id()`` names it (a doctest by its docstring's qualified name, in the file
it documents), each file relative to the repository (the working folder, or ``--root``).

With ``--probe`` nothing is skipped or turned into a skip: the exempted tests run too (a
weekly probe job, to learn which exemptions pass now; upload it with ``parity_ci.py upload
--probe``). The JUnit XML records the manifest version of the exemptions applied, and a probe,
as ``<properties>`` of each test suite, which ``parity_ci.py upload`` sends with the upload.

``--run-manifest FILE`` appends each script to a run manifest (JSON Lines) for ``parity_ci.py
upload --run-manifest FILE`` before importing it, and how the run ended after: a script that
crashes the process leaves its entry unfinished, and its tests read ``crashed``, not ``missing``.

Settings: ``--backend`` (or ``PARITY_BACKEND``); ``--attr key=value`` (repeatable; default:
``PARITY_ATTR_<KEY>`` and CI conventions, as for ``parity_ci.py``); ``PARITY_URL``,
``PARITY_TOKEN`` and ``PARITY_PROJECT`` as for ``parity_ci.py``. Without a backend the tests
run as they are.

Exit codes: 0 every test passed or was exempted; 1 a test failed or a script could not be
imported; otherwise ``parity_ci.py``'s codes: 2 bad usage or settings, 3 the token was refused,
4 the server refused the request, 5 the server could not be reached (``--optional``: warn and
run every test instead).
"""

from __future__ import annotations

import argparse
import doctest
import importlib.util
import os
import re
import socket
import sys
import time
import traceback
import unittest
from collections import Counter
from dataclasses import dataclass
from typing import Iterator, Sequence
from xml.etree import ElementTree

import parity_ci

SKIPPING_KINDS = parity_ci.SKIPPING_KINDS
QUARANTINE = "quarantine"
# Outcomes by weight: a test that failed and then errored in tearDown errored.
_RANK = {"": -1, "passed": 0, "skipped": 1, "failure": 2, "error": 3}
# Characters XML 1.0 cannot hold (ingest refuses such a file): control characters but tab and
# line ends, lone surrogates, U+FFFE and U+FFFF.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


# --- Loading scripts ----------------------------------------------------------------------


# The repository's root, which test files are named relative to: the working folder unless
# ``--root`` says otherwise.
ROOT = os.curdir


def script_path(path: str) -> str:
    """``path`` as the test IDs name it: relative to the repository, with ``/``. A file outside
    it (an installed package's) is named relative to its ``sys.path`` folder, never by this
    machine's absolute path, which no other backend's report shares."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute, os.path.abspath(ROOT))
    if relative.startswith(os.pardir):
        relative = _import_path(absolute)
    return relative.replace(os.sep, "/")


def _import_path(absolute: str) -> str:
    """``absolute`` relative to the deepest ``sys.path`` folder holding it, else its name."""
    folders = [os.path.abspath(folder or os.curdir) for folder in sys.path]
    holding = [f for f in folders if absolute.startswith(os.path.join(f, ""))]
    if not holding:
        return os.path.basename(absolute)
    return os.path.relpath(absolute, max(holding, key=len))


def script_module_name(path: str) -> str:
    """``test/test_ops.py`` → ``test.test_ops``; the file's stem when it is outside the
    working folder."""
    relative = script_path(path)
    stem = relative[: -len(".py")] if relative.endswith(".py") else relative
    return stem.replace("/", ".")


def script_load(path: str):
    """Import the script at ``path`` as a module, as ``python path`` would run it but under
    its own name rather than ``__main__``."""
    name = script_module_name(path)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:
        sys.path.insert(0, folder)  # its sibling imports (test_utils), as a script has them
    argv = sys.argv
    sys.argv = [path]  # scripts that parse their flags at import see none of ours
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    finally:
        sys.argv = argv
    return module


def suite_tests(suite: unittest.TestSuite) -> Iterator[unittest.TestCase]:
    for test in suite:
        if isinstance(test, unittest.TestSuite):
            yield from suite_tests(test)
        else:
            yield test


@dataclass(frozen=True)
class CaseName:
    """Where a test lives, as JUnit names it and as a pytest node ID."""

    file: str  # test/test_ops.py ("" when unknown)
    module: str  # test.test_ops
    cls: str  # TestOpsXLA (Outer.Inner when nested; "" for a module fixture)
    name: str  # test_add_xla_float32

    @property
    def classname(self) -> str:
        return f"{self.module}.{self.cls}" if self.cls else self.module

    @property
    def node_id(self) -> str:
        scopes = [*self.cls.split("."), self.name] if self.cls else [self.name]
        return "::".join([self.file, *scopes])


def case_name(test: unittest.TestCase) -> CaseName:
    """The test's name as unittest's ``id()`` gives it, split into module, class and name. The
    kinds of test unittest makes itself (doctests, function tests, failed imports) are named
    for the code they stand for, not for their class in the standard library."""
    if isinstance(test, doctest.DocTestCase):
        return _doctest_name(test)
    if isinstance(test, unittest.FunctionTestCase):
        function = test._testFunc
        module = getattr(function, "__module__", "") or ""
        return CaseName(module_file(module), module, "", getattr(function, "__name__", test.id()))
    if type(test).__name__ == "_FailedTest":
        return _failed_import_name(test)
    cls = type(test)
    # A class a function makes is "make.<locals>.Case" for every one it makes: its own
    # __name__ (TestViewOpsXLA) tells them apart.
    qualname = cls.__qualname__ if "<" not in cls.__qualname__ else cls.__name__
    return CaseName(
        file=module_file(cls.__module__),
        module=cls.__module__,
        cls=qualname,
        name=getattr(test, "_testMethodName", str(test)),
    )


def _doctest_name(test: doctest.DocTestCase) -> CaseName:
    """A docstring's examples: named by the docstring's qualified name (``toolbox.more.
    chunked``, its ``id()``) in the file of the module it documents, as pytest's
    ``--doctest-modules`` names them. A text file's examples (DocFileSuite) are named by
    their ``id()`` in that file."""
    dt = test._dt_test
    file = script_path(dt.filename) if dt.filename else ""
    module = dt.globs.get("__name__", "")
    if not isinstance(module, str) or not dt.name.startswith(module + ".") and dt.name != module:
        module = ""
    return CaseName(file=file or module_file(module), module=module, cls="", name=test.id())


def _failed_import_name(test: unittest.TestCase) -> CaseName:
    """A module unittest's loader could not import (its ``_FailedTest``): named for that
    module, in its file, rather than for ``unittest/loader.py``."""
    module = test._testMethodName
    file = module_file(module)
    if not file:
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        origin = getattr(spec, "origin", None)
        file = script_path(origin) if origin and os.path.isfile(origin) else ""
    return CaseName(file=file, module=module, cls="", name=module.rpartition(".")[2])


def module_file(module: str) -> str:
    file = getattr(sys.modules.get(module), "__file__", None)
    return script_path(file) if file else ""


# --- Exemptions ---------------------------------------------------------------------------


def exemptions_find(
    backend: str,
    tests: Sequence[unittest.TestCase],
    *,
    client: parity_ci.Client,
    attributes: dict[str, str] | None = None,
) -> dict[unittest.TestCase, tuple[str, str]]:
    """(kind, message) of each exempted test, by test: one resolve request. Tests are keyed by
    themselves, not by ``id()``, which classes a function generates can share."""
    node_ids = [case_name(test).node_id for test in tests]
    exempted = client.resolve(backend, node_ids, attributes=attributes)
    return {tests[e["index"]]: (e["kind"], e["message"]) for e in exempted}


def exemptions_apply(
    tests: Sequence[unittest.TestCase], found: dict[unittest.TestCase, tuple[str, str]]
) -> dict[unittest.TestCase, str]:
    """Skip the exempted tests (and the class fixtures of classes they fill); return the
    quarantined tests' messages by test."""
    quarantined = {}
    skipped_by_class: dict[type, list[bool]] = {}
    for test in tests:
        kind, message = found.get(test, ("", ""))
        if kind in SKIPPING_KINDS:
            _skip(test, message)
        elif kind == QUARANTINE:
            quarantined[test] = message
        skipped_by_class.setdefault(type(test), []).append(kind in SKIPPING_KINDS)
    _skip_class_fixtures(skipped_by_class)
    return quarantined


def _skip(test: unittest.TestCase, message: str) -> None:
    """Skip one test the way ``@unittest.skip`` does (setUp does not run), on this instance
    only: a method inherited by other classes stays as it is for them."""

    def exempted(*args, **kwargs):
        raise unittest.SkipTest(message)

    exempted.__unittest_skip__ = True  # type: ignore[attr-defined]
    exempted.__unittest_skip_why__ = message  # type: ignore[attr-defined]
    setattr(test, test._testMethodName, exempted)


def _skip_class_fixtures(skipped_by_class: dict[type, list[bool]]) -> None:
    """Mark classes whose every test is exempted skipped, so their setUpClass (which may touch
    a device the backend lacks) does not run; each test keeps its own message. A subclass
    with tests to run must not inherit the mark."""
    before = {cls: bool(getattr(cls, "__unittest_skip__", False)) for cls in skipped_by_class}
    for cls, skipped in skipped_by_class.items():
        if all(skipped) and not before[cls]:
            cls.__unittest_skip__ = True  # type: ignore[attr-defined]
    for cls, skipped in skipped_by_class.items():
        if not all(skipped) and not before[cls] and getattr(cls, "__unittest_skip__", False):
            cls.__unittest_skip__ = False  # type: ignore[attr-defined]


# --- Running and reporting ----------------------------------------------------------------


@dataclass
class CaseResult:
    name: CaseName
    outcome: str = ""  # passed, skipped, failure, error ("": none reported yet)
    message: str = ""
    details: str = ""
    error_type: str = ""
    seconds: float = 0.0


class ParityResult(unittest.TextTestResult):
    """A text result that turns quarantined tests' failures into skips and keeps each test's
    outcome for the JUnit report."""

    def __init__(
        self, stream, descriptions, verbosity, *, quarantined: dict[unittest.TestCase, str]
    ):
        super().__init__(stream, descriptions, verbosity)
        self.quarantined = quarantined
        self.cases: dict[unittest.TestCase, CaseResult] = {}
        self.quarantine_failures: list[str] = []  # their id()s, for the log
        self._quarantine_skipped: set[unittest.TestCase] = set()
        self._started: dict[unittest.TestCase, float] = {}

    def startTest(self, test):
        super().startTest(test)
        self._case(test)  # named before it runs: a doctest's tearDown clears its globals
        self._started[test] = time.perf_counter()

    def stopTest(self, test):
        super().stopTest(test)
        started = self._started.pop(test, None)
        if started is not None:
            self._case(test).seconds = time.perf_counter() - started

    def addSuccess(self, test):
        super().addSuccess(test)
        self._outcome(test, "passed")

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._outcome(test, "skipped", message=reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        # As unittest-xml-reporting writes one, which ingest reads as an expected failure.
        self._outcome(test, "skipped", err=err, prefix="expected failure: ", error_type="XFAIL")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._outcome(test, "failure", message="unexpected success")

    def addFailure(self, test, err):
        if not self._quarantine(test, err):
            super().addFailure(test, err)
            self._outcome(test, "failure", err=err)

    def addError(self, test, err):
        if not self._quarantine(test, err):
            super().addError(test, err)
            self._outcome(test, "error", err=err)

    def addSubTest(self, test, subtest, err):
        if err is not None and self._quarantine(test, err):
            return
        super().addSubTest(test, subtest, err)
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            self._outcome(test, "failure" if failed else "error", err=err)

    def _quarantine(self, test, err) -> bool:
        """Report a quarantined test's failure as its skip (once); False for other tests."""
        message = self.quarantined.get(test)
        if message is None:
            return False
        if test not in self._quarantine_skipped:
            self._quarantine_skipped.add(test)
            self.quarantine_failures.append(test.id())
            self.addSkip(test, message)
        return True

    def _outcome(
        self, test, outcome: str, *, message="", err=None, prefix="", error_type=""
    ) -> None:
        case = self._case(test)
        if _RANK[outcome] <= _RANK[case.outcome]:
            return  # the worst outcome stays, the first of equals
        case.outcome = outcome
        case.message = message
        if err is not None:
            exception = traceback.format_exception_only(err[0], err[1])[-1].strip()
            case.message = prefix + (message or exception)
            case.error_type = error_type or err[0].__name__
            # How TestResult itself renders a failure (the traceback without unittest's frames).
            case.details = self._exc_info_to_string(err, test)

    def _case(self, test) -> CaseResult:
        # By the test itself: two tests unittest's id() names alike are still two results.
        if test not in self.cases:
            self.cases[test] = CaseResult(_result_name(test))
        return self.cases[test]


def _result_name(test) -> CaseName:
    if isinstance(test, unittest.TestCase):
        return case_name(test)
    # A class or module fixture's failure (unittest's _ErrorHolder): "setUpClass (mod.Class)"
    # or "setUpModule (mod)".
    description = getattr(test, "description", str(test))
    fixture, _, where = description.partition(" (")
    where = where.rstrip(")")
    module, cls = where, ""
    if where not in sys.modules:
        module, _, cls = where.rpartition(".")
    return CaseName(file=module_file(module), module=module, cls=cls, name=fixture)


class ParityRunner(unittest.TextTestRunner):
    def __init__(self, *, quarantined: dict[unittest.TestCase, str], **kwargs) -> None:
        super().__init__(**kwargs)
        self.quarantined = quarantined

    def _makeResult(self) -> ParityResult:
        return ParityResult(
            self.stream, self.descriptions, self.verbosity, quarantined=self.quarantined
        )


def junit_xml(
    cases: Sequence[CaseResult], *, seconds: float, properties: Sequence[tuple[str, str]] = ()
) -> bytes:
    """The results as JUnit XML: one <testsuite> per module, in the order tests ran, each
    with ``properties`` (what parity applied) first."""
    root = ElementTree.Element("testsuites", name="parity_unittest", time=f"{seconds:.3f}")
    suites: dict[str, ElementTree.Element] = {}
    for case in cases:
        module = case.name.module
        suite = suites.get(module)
        if suite is None:
            suite = suites[module] = ElementTree.SubElement(
                root, "testsuite", name=module, hostname=socket.gethostname()
            )
            _properties(suite, properties)
        attributes = {"classname": case.name.classname, "name": case.name.name}
        if case.name.file:
            attributes["file"] = case.name.file
        attributes["time"] = f"{case.seconds:.3f}"
        element = ElementTree.SubElement(suite, "testcase", attributes)
        if case.outcome not in ("", "passed"):
            child = ElementTree.SubElement(element, case.outcome, message=_xml(case.message))
            if case.error_type:
                child.set("type", case.error_type)
            child.text = _xml(case.details) or None
    for element in [root, *suites.values()]:
        _count(element)
    return ElementTree.tostring(root, encoding="utf-8", xml_declaration=True)


def _properties(suite: ElementTree.Element, properties: Sequence[tuple[str, str]]) -> None:
    if properties:
        holder = ElementTree.SubElement(suite, "properties")
        for name, value in properties:
            ElementTree.SubElement(holder, "property", name=name, value=value)


def _count(element: ElementTree.Element) -> None:
    cases = list(element.iter("testcase"))
    element.set("tests", str(len(cases)))
    for outcome, attribute in (
        ("failure", "failures"),
        ("error", "errors"),
        ("skipped", "skipped"),
    ):
        element.set(attribute, str(sum(case.find(outcome) is not None for case in cases)))
    if element.tag == "testsuite":
        element.set("time", f"{sum(float(case.get('time', 0)) for case in cases):.3f}")


def _xml(text: str) -> str:
    return _NOT_XML.sub(lambda found: f"\\x{ord(found.group()):02x}", text)


# --- The command --------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m parity_unittest",
        description="Run unittest scripts with a backend's parity exemptions applied.",
    )
    parser.add_argument("scripts", nargs="+", metavar="SCRIPT", help="test files, e.g. test/x.py")
    parser.add_argument(
        "--backend",
        default=os.environ.get("PARITY_BACKEND") or None,
        help="apply this backend's exemptions (default: $PARITY_BACKEND; none: run as is)",
    )
    parser.add_argument(
        "--attr",
        action="append",
        metavar="KEY=VALUE",
        help="what this run runs on, repeatable: --attr arch=gfx942 (default: "
        "$PARITY_ATTR_<KEY> and CI conventions; docs/variants.md)",
    )
    parser.add_argument("--junit-xml", metavar="FILE", help="write the results as JUnit XML")
    parser.add_argument(
        "--run-manifest",
        metavar="FILE",
        help="append the scripts run, and how the run ended, to a run manifest for "
        "'parity_ci.py upload --run-manifest FILE' (a crash leaves them unfinished)",
    )
    parser.add_argument(
        "--root",
        default=os.curdir,
        help="the repository's root, which test files are named relative to (default: .)",
    )
    parser.add_argument(
        "--probe",
        action="store_true",
        default=os.environ.get("PARITY_PROBE") == "1",
        help="run the exempted tests too (a probe run, to learn which exemptions pass now; "
        "default: $PARITY_PROBE is 1)",
    )
    parser.add_argument(
        "--optional",
        action="store_true",
        help="when the parity server cannot be reached, warn and run every test",
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=parity_ci.RETRIES,
        help=f"retries of the resolve request (default {parity_ci.RETRIES})",
    )
    parser.add_argument("-v", "--verbose", action="store_const", const=2, dest="verbosity")
    parser.add_argument("-q", "--quiet", action="store_const", const=0, dest="verbosity")
    parser.set_defaults(verbosity=1)
    return parser


def _log(message: str) -> None:
    print(f"parity: {message}", file=sys.stderr, flush=True)


def _load(scripts: Sequence[str]) -> tuple[unittest.TestSuite, list[str]]:
    """The scripts' tests, and the scripts that could not be imported (reported here)."""
    suite, broken = unittest.TestSuite(), []
    loader = unittest.TestLoader()
    for path in dict.fromkeys(scripts):
        try:
            suite.addTests(loader.loadTestsFromModule(script_load(path)))
        except SystemExit as exc:  # a script may end itself early, e.g. on a missing device
            if exc.code not in (None, 0):
                _log(f"{path} exited with {exc.code!r} on import")
                broken.append(path)
            else:
                _log(f"{path} exited on import: it has no tests to run")
        except Exception:
            _log(f"cannot import {path}:\n{traceback.format_exc()}")
            broken.append(path)
    return suite, broken


def _exemptions(
    args: argparse.Namespace, tests: list[unittest.TestCase]
) -> tuple[dict[unittest.TestCase, tuple[str, str]], str]:
    """The exempted tests, and the manifest version of the list they come from ("" when the
    server could not be reached)."""
    client = parity_ci.Client.from_env(retries=max(args.retries, 0))
    try:
        attributes = parity_ci.run_attributes(args.attr, os.environ)
        found = exemptions_find(args.backend, tests, client=client, attributes=attributes)
    except parity_ci.ServerUnreachable as exc:
        if not args.optional:
            raise
        _log(f"WARNING: no exemptions applied: {exc}")
        return {}, ""
    kinds = [kind for kind, _ in found.values()]
    counts = ", ".join(f"{kinds.count(k)} {k}" for k in sorted(set(kinds))) or "none"
    ran = " (probe: they run)" if args.probe else ""
    _log(f"exempted tests of {args.backend} ({client.url}): {counts}{ran}")
    return found, client.last_version


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    global ROOT
    ROOT = args.root
    files = [script_path(path) for path in dict.fromkeys(args.scripts)]
    if args.run_manifest:  # before importing: a script may crash on import
        for file in files:
            parity_ci.run_manifest_append(args.run_manifest, {"file": file, "started": True})
    suite, broken = _load(args.scripts)
    tests = list(suite_tests(suite))
    quarantined: dict[unittest.TestCase, str] = {}
    properties = [(parity_ci.PROPERTY_PROBE, "true")] if args.probe else []
    if args.backend and tests:
        try:
            found, version = _exemptions(args, tests)
        except parity_ci.ParityError as exc:
            _log(str(exc))
            return exc.exit_code
        if not args.probe:  # a probe runs every test as it is
            quarantined = exemptions_apply(tests, found)
        if version:
            properties.append((parity_ci.PROPERTY_VERSION, version))
    started = time.perf_counter()
    result = ParityRunner(quarantined=quarantined, verbosity=args.verbosity).run(suite)
    for test_id in result.quarantine_failures:
        _log(f"quarantined test failed, reported as skipped: {test_id}")
    if args.junit_xml:
        report = junit_xml(
            list(result.cases.values()),
            seconds=time.perf_counter() - started,
            properties=properties,
        )
        folder = os.path.dirname(os.path.abspath(args.junit_xml))
        os.makedirs(folder, exist_ok=True)
        with open(args.junit_xml, "wb") as out:
            out.write(report)
    code = 0 if result.wasSuccessful() and not broken else 1
    if args.run_manifest:
        _run_manifest_end(args, files, result, code=code, seconds=time.perf_counter() - started)
    return code


def _run_manifest_end(
    args: argparse.Namespace, files: list[str], result: ParityResult, *, code: int, seconds: float
) -> None:
    tests = Counter(case.name.file for case in result.cases.values())
    for file in files:
        entry = {
            "file": file,
            "started": True,
            "exit_code": code,
            "duration": round(seconds, 3),
            "report": bool(args.junit_xml),
            "tests": tests[file] if args.junit_xml else None,
        }
        parity_ci.run_manifest_append(args.run_manifest, entry)


if __name__ == "__main__":
    sys.exit(main())
