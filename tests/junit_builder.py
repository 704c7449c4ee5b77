"""Write JUnit XML documents for scenario tests, of any size (linear time: ElementTree, not
junitparser, whose add_testcase is quadratic in the suite's size)."""

import xml.etree.ElementTree as ET
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    classname: str
    name: str
    outcome: str = "passed"  # passed | skipped | failed | error
    message: str = ""
    file: str | None = None
    seconds: float = 0.01


_RESULT_TAGS = {"skipped": "skipped", "failed": "failure", "error": "error"}


def junit_xml(*cases: Case, suite: str = "suite") -> bytes:
    root = ET.Element("testsuites")
    test_suite = ET.SubElement(root, "testsuite", name=suite, tests=str(len(cases)))
    for case in cases:
        element = ET.SubElement(
            test_suite, "testcase", name=case.name, classname=case.classname, time=str(case.seconds)
        )
        if case.file:
            element.set("file", case.file)
        if case.outcome != "passed":
            ET.SubElement(element, _RESULT_TAGS[case.outcome], message=case.message)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)
