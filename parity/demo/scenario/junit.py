"""Writing the files: JUnit XML as xmlrunner and absltest write it, zipped or merged."""

from __future__ import annotations

import datetime
import io
import random
import zipfile
from collections import Counter
from collections.abc import Iterator
from typing import Any
from xml.etree import ElementTree

from junitparser import Attr, Error, Failure, JUnitXml, Skipped, TestCase, TestSuite

from parity.demo.scenario.cases import SEED, Outcome
from parity.demo.scenario.timing import Timed

REPORTS_DIR = "test-reports/python-unittest"
# Reason wordings a converter may produce; (weight, template). {where} is "file:line".
SKIP_WORDINGS = (
    (14, "{reason}"),
    (2, "{where}: {reason}"),
    (2, "{where}: Skipped: {reason}"),
    (1, "Skipped: {reason}"),
)


def skip_wording(backend: str, day: datetime.date) -> str:
    """How this backend's converter words skip reasons in that day's run (seeded)."""
    rng = random.Random(f"{SEED}:wording:{backend}:{day.isoformat()}")
    weights, templates = zip(*SKIP_WORDINGS, strict=True)
    return rng.choices(templates, weights=weights)[0]


def _by_file(timed: list[Timed]) -> Iterator[list[Timed]]:
    group: list[Timed] = []
    for item in timed:
        if group and item.case.file != group[0].case.file:
            yield group
            group = []
        group.append(item)
    if group:
        yield group


def _by_class(items: list[Timed]) -> dict[str, list[Timed]]:
    classes: dict[str, list[Timed]] = {}
    for item in items:
        classes.setdefault(item.case.cls, []).append(item)
    return classes


def zip_bytes(timed: list[Timed], wording: str) -> bytes:
    """A ``test-reports`` folder as xmlrunner and absltest leave it, zipped."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for items in _by_file(timed):
            case, start = items[0].case, items[0].file_start
            if case.dialect == "upstream":
                raise ValueError("upstream tests go in merged XML: their path leaves the repo")
            folder = f"{REPORTS_DIR}/{case.file.removesuffix('.py').replace('/', '.')}"
            for name, document in _file_documents(items, wording):
                info = zipfile.ZipInfo(f"{folder}/{name}", date_time=start.timetuple()[:6])
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                archive.writestr(info, _xml_bytes(document))
    return buffer.getvalue()


def _file_documents(items: list[Timed], wording: str) -> Iterator[tuple[str, Any]]:
    """xmlrunner writes one ``TEST-<Class>-<time>.xml`` per class; absltest one file."""
    first = items[0]
    stamp = first.file_start.strftime("%Y%m%d%H%M%S")
    suites = _suites(items, wording, merged=False)
    if first.case.dialect == "absl":
        stem = first.case.file.rsplit("/", 1)[-1].removesuffix(".py")
        yield f"TEST-{stem}-{stamp}.xml", _testsuites(suites)
        return
    for cls, suite in zip(_by_class(items), suites, strict=True):
        yield f"TEST-{cls}-{stamp}.xml", suite


def merged_xml_bytes(timed: list[Timed], wording: str) -> bytes:
    """One ``<testsuites>`` holding every class's suite, as a CI merge step writes it."""
    suites = [s for items in _by_file(timed) for s in _suites(items, wording, merged=True)]
    return _xml_bytes(_testsuites(suites))


def _testsuites(suites: list[TestSuite]) -> JUnitXml:
    root = JUnitXml()
    for suite in suites:
        root.append(suite)  # not add_testsuite(), which merges suites of equal name
    # The totals update_statistics() writes, in its order, from the suites' counts: it would
    # count every suite's cases again.
    root.tests = sum(suite.tests for suite in suites)
    root.failures = sum(suite.failures for suite in suites)
    root.errors = sum(suite.errors for suite in suites)
    root.skipped = sum(suite.skipped for suite in suites)
    root.time = round(sum(suite.time for suite in suites), 3)
    return root


def _suites(items: list[Timed], wording: str, *, merged: bool) -> list[TestSuite]:
    start = items[0].file_start
    stamp = start.strftime("%Y%m%d%H%M%S")
    absl = items[0].case.dialect == "absl"
    suites = []
    for cls, members in _by_class(items).items():
        # xmlrunner names a suite "<Class>-<outsuffix>"; absltest by the class alone.
        suite = TestSuite(cls if absl else f"{cls}-{stamp}")
        end = start + datetime.timedelta(seconds=sum(m.seconds for m in members))
        suite.timestamp = end.replace(microsecond=0).isoformat()
        _add_counted(suite, [_case_element(m, wording, merged=merged) for m in members])
        suites.append(suite)
    return suites


def _add_counted(suite: TestSuite, cases: list[TestCase]) -> None:
    """``suite.add_testcases(cases)``: the same counts, in the order its update_statistics()
    sets them, read from the cases' elements once; junitparser's recount wraps every case and
    result in objects, a large part of the time the demo's files took to make."""
    suite.extend(cases)
    results = Counter(result.tag for case in cases for result in case._elem)
    suite.tests = len(cases)
    suite.errors = results[Error._tag]
    suite.failures = results[Failure._tag]
    suite.skipped = results[Skipped._tag]
    suite.time = round(sum(case.time for case in cases), 3)


class _XmlrunnerCase(TestCase):
    file = Attr()


class _AbslCase(TestCase):
    status = Attr()
    file = Attr()


def _case_element(item: Timed, wording: str, *, merged: bool) -> TestCase:
    case, outcome = item.case, item.outcome
    if case.dialect == "absl":
        return _absl_case(item, merged=merged)
    classname = case.cls
    if case.dialect == "unittest_module":
        # `python -m unittest test_x.Class.test` keeps the module: it is not __main__.
        classname = f"{case.file.rsplit('/', 1)[-1].removesuffix('.py')}.{case.cls}"
    element = _XmlrunnerCase(case.name, classname, item.seconds)
    element.file = case.file
    if outcome.status == "skipped":
        message = _worded(outcome, wording)
        skipped = Skipped(message, "skip" if message == outcome.message else "pytest.skip")
        if message != outcome.message:
            skipped.text = message
        element.result = [skipped]
    elif outcome.status != "passed":
        element.result = [_problem(outcome)]
    return element


def _absl_case(item: Timed, *, merged: bool) -> TestCase:
    """absltest's shape: the module stays in classname, and a skip is only an attribute."""
    element = _AbslCase(item.case.name, f"__main__.{item.case.cls}", item.seconds)
    skipped = item.outcome.status == "skipped"
    element.status = "notrun" if skipped else "run"
    # junitparser's TestCase.result is the outcome list, so this attribute is set directly.
    element._elem.set("result", "suppressed" if skipped else "completed")
    if merged:
        # The merge step records what absltest's XML leaves out: the file, and the reason its
        # log prints (`[  SKIPPED ] TestFoo.test_x - <reason>`).
        element.file = item.case.file
        if skipped and item.outcome.message:
            element.result = [Skipped(item.outcome.message)]
    if item.outcome.status in ("failed", "error"):
        element.result = [_problem(item.outcome)]
    return element


def _problem(outcome: Outcome) -> Failure | Error:
    kind = Failure if outcome.status == "failed" else Error
    element = kind(outcome.message, outcome.error_type)
    element.text = f"{outcome.error_type}: {outcome.message}"
    return element


def _worded(outcome: Outcome, wording: str) -> str:
    if not outcome.message or not outcome.where:
        return outcome.message
    return wording.format(reason=outcome.message, where=outcome.where)


def _xml_bytes(document: JUnitXml | TestSuite) -> bytes:
    """The bytes junitparser's ``write`` gives, serialized into one string first: writing into a
    byte stream encodes each of its hundreds of thousands of pieces apart, at twice the cost."""
    # junitparser keeps its ElementTree element in ``_elem``, and has no public accessor for it.
    return _XML_DECLARATION + ElementTree.tostring(document._elem, encoding="unicode").encode()


_XML_DECLARATION = b"<?xml version='1.0' encoding='utf-8'?>\n"
