"""Write small JUnit XML documents for scenario tests, with junitparser (the writing side)."""

from dataclasses import dataclass

from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite


@dataclass(frozen=True)
class Case:
    classname: str
    name: str
    outcome: str = "passed"  # passed | skipped | failed | error
    message: str = ""
    file: str | None = None


_RESULT_TYPES = {"skipped": Skipped, "failed": Failure, "error": Error}


def junit_xml(*cases: Case, suite: str = "suite") -> bytes:
    test_suite = TestSuite(suite)
    for case in cases:
        element = TestCase(case.name, classname=case.classname, time=0.01)
        if case.file:
            element._elem.set("file", case.file)  # junitparser has no accessor for file=
        if case.outcome != "passed":
            element.result = [_RESULT_TYPES[case.outcome](message=case.message)]
        test_suite.add_testcase(element)
    document = JUnitXml()
    document.add_testsuite(test_suite)
    return document.tostring()
