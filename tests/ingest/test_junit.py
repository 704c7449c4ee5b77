"""ingest.junit: dialects, the shared corpus, hostile XML, streaming, and a round trip."""

from __future__ import annotations

import io
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite

from ingest.junit import (
    MAX_MESSAGE_CHARS,
    ForbiddenXML,
    JUnitError,
    MalformedXML,
    NotJUnit,
    ParsedCase,
    iter_cases,
    parse_duration,
)
from tests.ingest.corpus import (
    REJECTED,
    CorpusFile,
    corpus_files,
    count_final_outcomes,
    exception_rows,
    manifest_rows,
)
from tests.shared_data import CORPUS_DIR, needs_corpus

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
JUNIT = FIXTURES / "junit"
HOSTILE = FIXTURES / "hostile"


def parse(path: Path) -> list[ParsedCase]:
    with path.open("rb") as stream:
        return list(iter_cases(stream))


def parse_bytes(data: bytes) -> list[ParsedCase]:
    return list(iter_cases(io.BytesIO(data)))


def by_name(cases: list[ParsedCase]) -> dict[str, ParsedCase]:
    return {case.name: case for case in cases}


# --- the shared corpus ------------------------------------------------------------------------


def _corpus_params() -> list:
    files = corpus_files()
    if not files:
        reason = f"the JUnit corpus is not at {CORPUS_DIR} (set PARITY_SHARED_DIR)"
        return [pytest.param(None, id="no-corpus", marks=pytest.mark.skip(reason=reason))]
    return [pytest.param(file, id=file.path) for file in files]


@pytest.mark.parametrize("corpus_file", _corpus_params())
def test_corpus_file(corpus_file: CorpusFile) -> None:
    with corpus_file.absolute.open("rb") as stream:
        if corpus_file.expected is None:
            with pytest.raises(JUnitError):
                list(iter_cases(stream))
            return
        counts = count_final_outcomes(iter_cases(stream))
    assert counts == corpus_file.expected, corpus_file.reason


@needs_corpus
def test_every_corpus_exception_is_still_needed() -> None:
    """A row that agrees with MANIFEST's census, or names a missing file, must go."""
    manifest = manifest_rows()
    for row in exception_rows():
        census = manifest.get(row["path"])
        assert census is not None, f"{row['path']} is not in MANIFEST.tsv"
        assert row["reason"].strip(), f"{row['path']} needs a reason"
        if row["total"] == REJECTED:
            assert census["well_formed"] == "yes", f"{row['path']}: MANIFEST already rejects it"
            continue
        ours = (row["total"], row["skipped"], row["failed"], row["error"])
        theirs = (census["testcases"], census["skipped"], census["failures"], census["errors"])
        assert ours != theirs, f"{row['path']}: same counts as MANIFEST, drop the row"


# --- dialects ---------------------------------------------------------------------------------


def test_pytest_dialect() -> None:
    cases = by_name(parse(JUNIT / "pytest_dialect.xml"))

    assert cases["test_add"] == ParsedCase(
        classname="test.test_ops.TestOps",
        name="test_add",
        file="test/test_ops.py",
        suite="pytest",
        outcome="passed",
        duration=0.01,
        message=None,
    )
    assert cases["test_skip_with_message"].message == "Not supported on TPU"
    # no message attribute: the stripped element text is the skip reason
    assert cases["test_skip_text_only"].message == "test/test_ops.py:30: needs 2 devices"
    assert cases["test_xfail"].outcome == "skipped"
    assert cases["test_div"].message == "AssertionError: Tensor-likes are not close!"
    # no message attribute: the first non-empty line of the text
    assert cases["test_failure_text_only"].message == "E   assert 1 == 2"
    assert cases["test_failure_text_only"].duration == 1234.5
    assert cases["test_setup_error"].outcome == "error"
    assert cases["test_setup_error"].message == 'failed on setup with "RuntimeError: device lost"'
    assert cases["test_setup_error"].duration is None
    # pytest-rerunfailures' <rerun> children record earlier attempts only
    assert cases["test_flaky_rerun"].outcome == "passed"
    assert cases["test_flaky_rerun"].message is None
    assert cases["test_flaky_rerun"].duration is None
    assert cases["test_rerun_then_failed"].outcome == "failed"
    assert cases["test_rerun_then_failed"].message == "AssertionError: final attempt"


def test_xmlrunner_keeps_main_classname_verbatim() -> None:
    """``__main__`` is resolved later from the archive folder, not by the parser."""
    cases = parse(JUNIT / "xmlrunner_main.xml")

    assert [(c.classname, c.name, c.outcome) for c in cases] == [
        ("__main__.TestOps", "test_add", "passed"),
        ("__main__.TestOps", "test_mul", "passed"),
        ("__main__.TestOps", "test_sort", "skipped"),
        ("__main__.TestOps", "test_div", "failed"),
    ]
    assert {c.suite for c in cases} == {"__main__.TestOps-20250301100000"}
    assert {c.file for c in cases} == {"test/test_ops.py"}
    assert cases[2].message == "sort is not lowered on this backend"
    assert cases[3].message == "1 != 2"


def test_gtest_skips_by_attribute() -> None:
    cases = by_name(parse(JUNIT / "gtest_result_skipped.xml"))

    assert {name: c.outcome for name, c in cases.items()} == {
        "Add": "passed",
        "SkippedByMacro": "skipped",
        "SkippedWithChild": "skipped",
        "DISABLED_Slow": "skipped",
        "Div": "failed",
    }
    assert cases["SkippedByMacro"].message is None
    assert cases["SkippedWithChild"].message == "test/cpp/test_tensor.cpp:26\nneeds a TPU"
    assert cases["Div"].message.startswith("test/cpp/test_tensor.cpp:42\nExpected equality")
    assert cases["Add"].file == "test/cpp/test_tensor.cpp"


def test_other_attribute_skips() -> None:
    cases = by_name(parse(JUNIT / "attribute_skips.xml"))

    assert {name: c.outcome for name, c in cases.items()} == {
        "disabled_test": "skipped",
        "disabled_but_failed": "failed",
        "gtest_old_disabled": "skipped",
        "teamcity_ignored": "skipped",
        "status_skipped": "skipped",
        "gtest_run": "passed",
        "nunit_passed": "passed",
    }
    assert cases["status_skipped"].message == "skipped by attribute"
    assert cases["disabled_test"].classname == ""


def test_surefire_flaky_and_rerun_children_do_not_change_the_outcome() -> None:
    cases = by_name(parse(JUNIT / "surefire_flaky.xml"))

    assert {name: c.outcome for name, c in cases.items()} == {
        "passesFirstTime": "passed",
        "flakyThenPasses": "passed",
        "flakyErrorThenPasses": "passed",
        "alwaysFails": "failed",
    }
    assert cases["flakyThenPasses"].message is None
    assert cases["alwaysFails"].message == "expected: <true> but was: <false>"
    assert {c.suite for c in cases.values()} == {"org.acme.FlakyTest"}


def test_nested_suites_prefixes_and_bare_cases() -> None:
    cases = parse(JUNIT / "nested_suites.xml")

    assert [(c.suite, c.classname, c.name, c.outcome) for c in cases] == [
        ("", "TopLevel", "directly_under_testsuites", "passed"),
        ("outer", "Outer", "before_inner", "passed"),
        ("inner", "Inner", "in_inner", "failed"),
        ("", "Nameless", "in_nameless_suite", "passed"),
        ("outer", "Outer", "after_inner", "passed"),
        ("prefixed", "Prefixed", "with_prefix", "skipped"),
        ("codeception", "LoginCest", "loginWorks", "passed"),
        ("no attributes", "", "", "passed"),
    ]
    assert cases[2].message == "boom"
    assert cases[5].message == "prefix stripped"
    assert cases[7].duration is None and cases[7].file is None


def test_nested_testcases_are_each_a_case() -> None:
    xml = (
        b'<testsuite name="s"><testcase name="outer"><testcase name="inner">'
        b'<failure message="inner failed"/></testcase><error message="outer erred"/>'
        b"</testcase></testsuite>"
    )
    cases = by_name(parse_bytes(xml))

    assert cases["inner"].outcome == "failed"
    assert cases["outer"].outcome == "error"
    assert cases["outer"].message == "outer erred"


def test_bom_and_blank_lines_before_the_declaration_are_tolerated() -> None:
    assert (JUNIT / "bom_leading_whitespace.xml").read_bytes().startswith(b"\xef\xbb\xbf\r\n")

    cases = parse(JUNIT / "bom_leading_whitespace.xml")

    assert [(c.name, c.suite, c.duration) for c in cases] == [
        ("survives_bom_and_blank_lines", "bom", 0.5)
    ]


def test_blanks_longer_than_a_chunk_and_one_byte_reads() -> None:
    xml = b'<testsuite name="s"><testcase name="a"/></testsuite>'

    assert [c.name for c in parse_bytes(b"\n" * 200_000 + xml)] == ["a"]
    assert [c.name for c in iter_cases(_OneByteReads(b"\xef\xbb\xbf  " + xml))] == ["a"]


def test_latin1_and_xml_1_1_declarations() -> None:
    (latin1,) = parse(JUNIT / "latin1.xml")
    (eleven,) = parse(JUNIT / "xml11.xml")

    assert (latin1.classname, latin1.name, latin1.message) == ("Café", "crème", "désactivé")
    assert eleven.name == "declared_xml_1_1"


def test_properties_and_output_are_ignored_and_empty_reports_yield_nothing() -> None:
    assert parse(JUNIT / "empty_testsuites.xml") == []
    xml = (
        b'<testsuites><testsuite name="s"><properties><property name="p" value="v"/>'
        b"</properties><system-out>lots of output</system-out><system-err>x</system-err>"
        b"</testsuite></testsuites>"
    )
    assert parse_bytes(xml) == []


def test_messages_are_stripped_truncated_and_fall_back_to_text() -> None:
    long = "x" * (MAX_MESSAGE_CHARS + 500)
    xml = (
        '<testsuite name="s">'
        f'<testcase name="long"><failure message="  {long}  "/></testcase>'
        f'<testcase name="long_text"><skipped>\n\n {long}</skipped></testcase>'
        '<testcase name="blank_attr"><error message="   ">\n\n  first line \nsecond</error>'
        "</testcase>"
        '<testcase name="nothing"><skipped message=""/></testcase>'
        '<testcase name="two_failures"><failure message="first"/><failure message="second"/>'
        "</testcase>"
        "</testsuite>"
    ).encode()
    cases = by_name(parse_bytes(xml))

    assert cases["long"].message == "x" * MAX_MESSAGE_CHARS
    assert cases["long_text"].message == "x" * MAX_MESSAGE_CHARS
    assert cases["blank_attr"].message == "first line"
    assert cases["nothing"].message is None
    assert cases["two_failures"].message == "first"


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("0.013", 0.013),
        (" 2 ", 2.0),
        ("1,234.5", 1234.5),
        ("8.7e-05", 8.7e-05),
        ("0.", 0.0),
        ("", None),
        ("<<computed>>", None),
        ("-998.5", None),
        ("nan", None),
        ("inf", None),
        (None, None),
    ],
)
def test_parse_duration(value: str | None, seconds: float | None) -> None:
    assert parse_duration(value) == seconds


# --- rejected files ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "message"),
    [
        ("bad_empty.xml", "the file is empty"),
        ("bad_whitespace_only.xml", "the file is empty"),
        ("bad_plain_text.xml", "not well-formed XML at line 1, column 0: syntax error"),
        ("bad_truncated.xml", "not well-formed XML at line 5, column 4: unclosed token"),
        ("bad_junk_after_root.xml", "at line 5, column 0: junk after document element"),
        (
            "bad_unclosed_cdata.xml",
            "not well-formed XML at line 5, column 0: unclosed CDATA section",
        ),
    ],
)
def test_malformed_files_are_rejected_with_a_position(fixture: str, message: str) -> None:
    with pytest.raises(MalformedXML) as raised:
        parse(JUNIT / fixture)

    assert message in str(raised.value)


def test_error_positions_count_the_blank_lines_we_skipped() -> None:
    # the same positions ElementTree reports for the unstripped bytes
    with pytest.raises(MalformedXML, match="at line 4, column 18: mismatched tag"):
        parse_bytes(b"\n\n\n  <testsuite><b></testsuite>")
    with pytest.raises(MalformedXML, match="at line 1, column 19: mismatched tag"):
        parse_bytes(b"   <testsuite><b></testsuite>")


def test_cases_before_a_late_error_are_yielded_first() -> None:
    """Streaming: callers that must be all-or-nothing (the writer's transaction) see the
    error after some cases."""
    many = b"".join(b'<testcase name="t%d"/>' % i for i in range(10_000))
    cases = iter_cases(io.BytesIO(b"<testsuite>" + many + b"</testsuite>\ntrailing junk"))

    assert next(cases).name == "t0"
    with pytest.raises(MalformedXML, match="junk after document element"):
        list(cases)


def test_a_foreign_root_is_not_junit() -> None:
    with pytest.raises(NotJUnit, match="root element is <assemblies>"):
        parse(JUNIT / "bad_not_junit.xml")
    with pytest.raises(NotJUnit, match="root element is <testcase>"):
        parse_bytes(b'<testcase name="alone"/>')


@pytest.mark.parametrize(
    "fixture",
    [
        "billion_laughs.xml",
        "xxe_local_file.xml",
        "external_dtd.xml",
        "parameter_entity_oob.xml",
        "entity_in_internal_subset.xml",
    ],
)
def test_dtds_and_entities_are_refused_fast(fixture: str) -> None:
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(ForbiddenXML) as raised:
            parse(HOSTILE / fixture)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert time.monotonic() - started < 1
    assert peak < 2 * 2**20
    assert "refused" in str(raised.value)
    assert "root:" not in str(raised.value)  # nothing of /etc/passwd


def test_a_doctype_after_a_bom_and_blank_lines_is_still_refused() -> None:
    with pytest.raises(ForbiddenXML):
        parse_bytes(b"\xef\xbb\xbf\n\n<!DOCTYPE testsuites><testsuites/>")


def test_an_undefined_entity_is_malformed_not_resolved() -> None:
    with pytest.raises(MalformedXML, match="undefined entity"):
        parse(HOSTILE / "undefined_entity.xml")


# --- streaming --------------------------------------------------------------------------------


class _OneByteReads(io.RawIOBase):
    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        return self._data.read(1)


class _GeneratedReport(io.RawIOBase):
    """A JUnit report of ``cases`` cases produced on demand, never held in memory whole."""

    def __init__(self, cases: int) -> None:
        self._chunks = self._generate(cases)
        self._pending = b""
        self.bytes_read = 0

    @staticmethod
    def _generate(cases: int) -> Iterator[bytes]:
        yield b'<?xml version="1.0"?>\n<testsuites><testsuite name="big">\n'
        failure = '<failure message="boom">trace</failure>'
        for start in range(0, cases, 1000):
            yield "".join(
                f'<testcase classname="pkg.Test{i // 1000}" name="test_{i}" time="0.01">'
                f"{failure if i % 10 == 0 else ''}"
                "<system-out>some output that must not accumulate</system-out></testcase>\n"
                for i in range(start, min(start + 1000, cases))
            ).encode()
        yield b"</testsuite></testsuites>\n"

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        while len(self._pending) < size:
            chunk = next(self._chunks, b"")
            if not chunk:
                break
            self._pending += chunk
        data, self._pending = self._pending[:size], self._pending[size:]
        self.bytes_read += len(data)
        return data


def test_parsing_streams_in_flat_memory() -> None:
    report = _GeneratedReport(100_000)
    cases = iter_cases(report)
    first = next(cases)
    assert first.name == "test_0" and first.outcome == "failed"
    assert report.bytes_read < 1 * 2**20  # the first case came before the file was read

    tracemalloc.start()
    try:
        count = 1 + sum(1 for _ in cases)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert count == 100_000
    assert report.bytes_read > 10 * 2**20
    assert peak < 4 * 2**20, f"peak {peak / 2**20:.1f} MiB while streaming"


# --- round trip -------------------------------------------------------------------------------

# XML 1.0 text without control characters; attribute values round-trip through escaping.
_text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=40)
_message = _text.map(str.strip).filter(bool)
_case = st.fixed_dictionaries(
    {
        "classname": _text,
        "name": _text,
        "outcome": st.sampled_from(["passed", "failed", "error", "skipped"]),
        "duration": st.none() | st.floats(min_value=0, max_value=1e6, allow_nan=False),
        "message": st.none() | _message,
    }
)
_RESULTS = {"failed": Failure, "error": Error, "skipped": Skipped}


@settings(max_examples=60, deadline=None)
@given(suite_name=_text, cases=st.lists(_case, max_size=20))
def test_round_trip_through_junitparser(suite_name: str, cases: list[dict]) -> None:
    suite = TestSuite(suite_name)
    for case in cases:
        written = TestCase(case["name"], case["classname"], case["duration"])
        if case["outcome"] != "passed":
            written.result = [_RESULTS[case["outcome"]](case["message"])]
        suite.add_testcase(written)
    report = JUnitXml()
    report.add_testsuite(suite)
    buffer = io.BytesIO()
    report.write(buffer)

    parsed = parse_bytes(buffer.getvalue())

    expected = [
        ParsedCase(
            classname=case["classname"],
            name=case["name"],
            file=None,
            suite=suite_name,
            outcome=case["outcome"],
            duration=case["duration"],
            message=None if case["outcome"] == "passed" else case["message"],
        )
        for case in cases
    ]
    assert parsed == expected
