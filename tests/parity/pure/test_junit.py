"""parity.pure.junit: dialects, the shared corpus, hostile XML, streaming, and a round trip."""

from __future__ import annotations

import gzip
import io
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite

from parity.pure.junit import (
    MAX_MESSAGE_CHARS,
    ForbiddenXML,
    JUnitError,
    MalformedXML,
    NotJUnit,
    OverLimit,
    ParsedCase,
    ParseLimits,
    iter_cases,
    parse_duration,
)
from parity.pure.junit.suites import MAX_LABEL_CHARS, suite_label
from tests.conftest import FIXTURES_DIR
from tests.ingest.corpus import (
    REJECTED,
    CorpusFile,
    corpus_files,
    count_final_outcomes,
    exception_rows,
    manifest_rows,
)
from tests.shared_data import CORPUS_DIR, needs_corpus

FIXTURES = FIXTURES_DIR
JUNIT = FIXTURES / "junit"
HOSTILE = FIXTURES / "hostile"
MiB = 2**20


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
        suite_label="pytest @ ci-runner-7",
        outcome="passed",
        duration=0.01,
        message=None,
    )
    assert cases["test_skip_with_message"].message == "Not supported on TPU"
    # no message attribute: the stripped element text is the skip reason
    assert cases["test_skip_text_only"].message == "test/test_ops.py:30: needs 2 devices"
    # an expected failure counts as a skip, and says it is one in words
    assert cases["test_xfail"].outcome == "skipped"
    assert cases["test_xfail"].message == "expected failure: flaky on XLA:CPU, see issue 4298"
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


def test_expected_failures_are_told_apart_from_skips() -> None:
    """pytest's xfail (with and without a reason) and xmlrunner's expectedFailure, as the
    shared corpus has them: still skipped outcomes, with messages that say "expected failure"
    even when the XML gives none; a plain skip's message is left alone."""
    cases = by_name(parse(JUNIT / "expected_failures.xml"))

    assert {name: (c.outcome, c.message) for name, c in cases.items()} == {
        "test_xfail_no_reason": ("skipped", "expected failure"),
        "test_xfail_reason": ("skipped", "expected failure: XLA lowers it wrong"),
        "test_xfail_text_only": ("skipped", "expected failure"),
        "test_expected_failure": (
            "skipped",
            "expected failure: (<class 'AssertionError'>, AssertionError('expected failure'), "
            "<traceback object at 0x100c125c0>)",
        ),
        "test_skip_no_reason": ("skipped", None),
        "test_xfail_then_failed": ("failed", "AssertionError: strict"),
    }


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


def test_each_case_carries_the_label_of_the_suites_around_it() -> None:
    cases = parse(JUNIT / "nested_suites.xml")

    assert [(c.name, c.suite_label) for c in cases] == [
        ("directly_under_testsuites", ""),  # <testsuites> is no suite
        ("before_inner", "outer"),
        ("in_inner", "outer / inner"),
        ("in_nameless_suite", "outer / inner"),  # a suite with no name adds nothing
        ("after_inner", "outer"),
        ("with_prefix", "prefixed"),
        ("loginWorks", "codeception"),
        ("", "no attributes"),
    ]


def test_a_suites_hostname_is_part_of_its_label() -> None:
    """Playwright names each browser project in the suite's hostname."""
    xml = (
        b'<testsuites><testsuite name="example.spec.ts" hostname="chromium">'
        b'<testcase classname="example.spec.ts" name="has title"/></testsuite>'
        b'<testsuite name="example.spec.ts" hostname="firefox"><testsuite hostname="inner">'
        b'<testcase classname="example.spec.ts" name="has title"/></testsuite></testsuite>'
        b"</testsuites>"
    )

    assert [c.suite_label for c in parse_bytes(xml)] == [
        "example.spec.ts @ chromium",
        "example.spec.ts @ firefox / @ inner",
    ]


def test_suite_labels_join_names_and_hosts_outermost_first() -> None:
    assert suite_label("", "FiltersTest") == "FiltersTest"
    assert suite_label("FiltersTest", "FiltersTest: chrome") == "FiltersTest / FiltersTest: chrome"
    assert suite_label("a.spec.ts", "", "") == "a.spec.ts"
    assert suite_label("", "a.spec.ts", "webkit") == "a.spec.ts @ webkit"
    assert suite_label("", "", "") == ""
    # unittest-xml-reporting's run time is not part of the suite: a rerun's suite has another
    assert suite_label("", "TestOps-20240101120000") == "TestOps"
    assert suite_label("", "TestOps-2024010112000") == "TestOps-2024010112000"  # 13 digits
    assert suite_label("", "20240101120000") == "20240101120000"


def test_a_long_suite_path_is_bounded_and_keeps_paths_apart() -> None:
    """A label never grows past MAX_LABEL_CHARS (plus nothing), however long the names above
    it, so a long outer name is not copied into every suite below it; two paths that differ
    only in the part cut away still get different labels."""
    outer = "o" * 10_000
    chrome = suite_label(suite_label("", outer + " chrome"), "FiltersTest")
    firefox = suite_label(suite_label("", outer + " firefox"), "FiltersTest")

    assert len(chrome) == len(firefox) == MAX_LABEL_CHARS
    assert chrome != firefox
    assert chrome.startswith("…") and " / FiltersTest #" in chrome
    assert suite_label(chrome, "inner") != suite_label(firefox, "inner")
    assert suite_label(chrome, "inner") == suite_label(chrome, "inner")  # stable
    assert len(suite_label(chrome, "x" * 300_000)) == MAX_LABEL_CHARS


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
    """A stream whose reads return ``size`` bytes at most, whatever was asked."""

    def __init__(self, data: bytes, size: int = 1) -> None:
        self._data = io.BytesIO(data)
        self._size = size

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        return self._data.read(self._size)


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


# --- limits: huge tokens, long messages, absurd names -----------------------------------------

_BLOCK = b"0123456789abcdef" * 4096  # 64 KiB
_HEAD = b'<?xml version="1.0"?>\n<testsuites>\n<testsuite name="s">\n'  # the big part: line 4
_FOOT = b'\n<testcase classname="c" name="after"/>\n</testsuite>\n</testsuites>\n'


def write_report(path: Path, *, before: bytes, size: int, after: bytes) -> Path:
    """A report with ``size`` bytes of filler between ``before`` and ``after``, streamed to disk
    (a gzip when ``path`` ends in .gz: one small member per block, as gzip allows)."""
    pack = gzip.compress if path.suffix == ".gz" else bytes
    block = pack(_BLOCK)
    with path.open("wb") as out:
        out.write(pack(_HEAD + before))
        for _ in range(size // len(_BLOCK)):
            out.write(block)
        out.write(pack(_BLOCK[: size % len(_BLOCK)] + after + _FOOT))
    return path


class _Deadline(io.RawIOBase):
    """Fails the test once it has been read for ``seconds``: a parser that spins for minutes on
    one token (as expat did) fails in bounded time instead of hanging the suite."""

    def __init__(self, raw: BinaryIO, seconds: float) -> None:
        self._raw = raw
        self._seconds = seconds
        self._end = time.monotonic() + seconds

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if time.monotonic() > self._end:
            pytest.fail(f"still parsing after {self._seconds:g} s")
        return self._raw.read(size)


def parse_big(path: Path) -> tuple[list[ParsedCase], int]:
    """The cases of a big report and the peak memory (bytes) of parsing it with the default
    limits; then the file goes, since 50 MB files need not outlive the test."""
    opener = gzip.open if path.suffix == ".gz" else open
    tracemalloc.start()
    try:
        with opener(path, "rb") as raw:
            cases = list(iter_cases(_Deadline(raw, 60)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        path.unlink()
    return cases, peak


def cut(text: str, size: int) -> str:
    """What a message cut while parsing reads: as much of it as fits, and the marker."""
    marker = f"… [truncated, {size:,} bytes in all]"
    return text[: MAX_MESSAGE_CHARS - len(marker)] + marker


def test_a_50_mb_message_attribute_is_cut_fast_in_flat_memory(tmp_path: Path) -> None:
    """Expat rescans an unfinished token per chunk: this took minutes, and far more memory than
    the file, before."""
    report = write_report(
        tmp_path / "big.xml",
        before=b'<testcase classname="c" name="big"><failure type="E" message="',
        size=50 * MiB,
        after=b'" other="kept">trace</failure></testcase>',
    )

    (big, after), peak = parse_big(report)

    assert big.outcome == "failed"
    assert big.message == cut(_BLOCK.decode(), 50 * MiB)
    assert after.name == "after"
    assert peak < 8 * MiB, f"peak {peak / MiB:.1f} MiB"


def test_a_200_mb_attribute_in_a_gzip_is_cut_fast(tmp_path: Path) -> None:
    report = write_report(
        tmp_path / "big.xml.gz",
        before=b'<testcase classname="c" name="big" status="skipped" message=\'',
        size=200 * MiB,
        after=b"'/>",
    )
    assert report.stat().st_size < 2 * MiB

    (big, after), peak = parse_big(report)

    assert (big.outcome, big.message) == ("skipped", cut(_BLOCK.decode(), 200 * MiB))
    assert after.name == "after"
    assert peak < 8 * MiB, f"peak {peak / MiB:.1f} MiB"


@pytest.mark.parametrize(
    ("before", "after", "outcome", "message"),
    [
        # one 50 MB line: the first line of a failure's text is its message
        (b"<failure>", b"\nsecond line</failure>", "failed", cut(_BLOCK.decode(), 50 * MiB + 12)),
        (b"<skipped>", b"</skipped>", "skipped", cut(_BLOCK.decode(), 50 * MiB)),
        (b"<failure>first line\n", b"</failure>", "failed", "first line"),
        (b'<error message="m"/><system-out>', b"</system-out>", "error", "m"),
    ],
    ids=["failure-text", "skipped-text", "failure-trace", "system-out"],
)
def test_50_mb_of_text_is_streamed_and_a_message_keeps_its_start(
    tmp_path: Path, before: bytes, after: bytes, outcome: str, message: str
) -> None:
    report = write_report(
        tmp_path / "big.xml",
        before=b'<testcase classname="c" name="big">' + before,
        size=50 * MiB,
        after=after + b"</testcase>",
    )

    (big, _), peak = parse_big(report)

    assert (big.outcome, big.message) == (outcome, message)
    assert peak < 8 * MiB, f"peak {peak / MiB:.1f} MiB"


def test_real_long_names_are_kept_whole() -> None:
    """pytest parametrizations make 600-character names; generated suites 100,000-character
    classnames. Both are real data, and longer than a message may be."""
    name = "test_op[" + "-".join(f"float32_{i}" for i in range(60)) + "]"
    classname = ".".join(f"pkg{i:05}" for i in range(16_667))[:100_000]
    xml = f'<testsuite><testcase classname="{classname}" name="{name}" file="f.py"/></testsuite>'

    assert len(name) >= 600 and len(classname) == 100_000
    # in short reads, the classname is an unfinished token past max_message_bytes
    for stream in (io.BytesIO(xml.encode()), _OneByteReads(xml.encode(), 1000)):
        (case,) = iter_cases(stream)
        assert (case.classname, case.name) == (classname, name)


def test_a_name_over_the_limit_is_refused_with_its_line() -> None:
    xml = (
        b"\n\n"
        + _HEAD
        + b"<testcase/>\n" * 6
        + b'<testcase classname="c"\n  name="'
        + b"x" * 2**20
        + b'"/>\n</testsuite></testsuites>'
    )

    with pytest.raises(OverLimit) as raised:
        parse_bytes(xml)

    assert str(raised.value) == (
        "testcase name at line 12 is 1,048,576 characters; the limit is 262,144"
    )


@pytest.mark.parametrize("gap", [0, 50_000, 2**20 - 300_000], ids=["next", "near", "far"])
def test_a_long_name_after_a_big_tag_is_refused(gap: int) -> None:
    """Names are checked only on tags the feeder watched, and on whatever it fed with them in
    the same big chunks: a long name just after a 1 MiB message must not slip through."""
    big_message = b'<testcase name="a"><failure message="' + b"m" * 2**20 + b'"/></testcase>\n'
    long_name = b'<testcase name="' + b"n" * 300_000 + b'"/>\n'
    xml = _HEAD + big_message + b"<testcase/>" * (gap // 11) + long_name + b"</testsuite>"

    line = xml[: xml.index(long_name)].count(b"\n") + 1
    with pytest.raises(OverLimit, match=f"^testcase name at line {line} is 300,000 characters"):
        parse_bytes(xml)


@pytest.mark.parametrize(
    ("xml", "error"),
    [
        ('<testsuite name="{}"/>', "testsuite name at line 1 is 11 characters"),
        ('<testsuite><testcase classname="{}"/></testsuite>', "testcase classname at line 1"),
        ('<testsuite><testcase class="{}"/></testsuite>', "testcase class at line 1"),
        ('<testsuite>\n<testcase file="{}"/></testsuite>', "testcase file at line 2"),
        ('<testsuite><testcase name="{}"/></testsuite>', "testcase name at line 1"),
    ],
)
def test_every_name_is_held_to_the_limit(xml: str, error: str) -> None:
    limits = ParseLimits(max_name_chars=10)
    data = xml.format("é" * 11).encode()

    with pytest.raises(OverLimit, match=f"^{error}.* the limit is 10$"):
        list(iter_cases(io.BytesIO(data), limits=limits))
    list(iter_cases(io.BytesIO(xml.format("é" * 10).encode()), limits=limits))  # at the limit


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (b"<!--", b"-->"),
        (b"<testcase", b'="x"/>'),  # a 50 MB tag name
        (b'<testcase name="', b'"/>'),  # a name is never cut
        (b"<?pi ", b"?>"),
    ],
    ids=["comment", "tag-name", "name", "processing-instruction"],
)
def test_a_token_over_the_cap_is_refused_fast(tmp_path: Path, before: bytes, after: bytes) -> None:
    report = write_report(tmp_path / "big.xml", before=before, size=50 * MiB, after=after)

    with pytest.raises(OverLimit) as raised:
        parse_big(report)

    assert str(raised.value) == (
        "a single XML tag at line 4 is over 16 MiB (the limit for one tag or comment)"
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        # the cut ends on a whole character, never inside one
        ("é" * 100, "é" * 10 + "… [truncated, 200 bytes in all]"),
        ("€" * 100, "€" * 7 + "… [truncated, 300 bytes in all]"),
        # ... or reference
        ("x&amp;" * 10, "x&" * 4 + "… [truncated, 60 bytes in all]"),
        ("&#x1F600;" * 5, "\U0001f600" * 3 + "… [truncated, 45 bytes in all]"),
        ("abc", "abc"),
    ],
)
def test_a_value_is_cut_on_a_character_boundary(value: str, message: str) -> None:
    """One-byte reads put the cut exactly at max_message_bytes (20 here)."""
    xml = f"<testsuite><testcase name='t'><skipped message='{value}' x='y'/></testcase></testsuite>"

    (case,) = iter_cases(_OneByteReads(xml.encode()), limits=ParseLimits(max_message_bytes=20))

    assert case.message == message


def test_a_cut_takes_one_step_in_latin1_or_an_endless_reference() -> None:
    """Latin-1 bytes 0x80-0xBF look like UTF-8 continuation bytes, and a reference may never
    end: neither may feed a cut on and on."""
    limits = ParseLimits(max_message_bytes=50)  # the XML declaration is 44 bytes
    latin1 = (
        '<?xml version="1.0" encoding="ISO-8859-1"?>'
        f"<testsuite><testcase name='t'><skipped message='{'°' * 100}'/></testcase></testsuite>"
    ).encode("latin-1")
    endless = b"<testsuite><testcase name='t'><skipped message='&" + b"a" * 100 + b"'/>"

    (case,) = iter_cases(_OneByteReads(latin1), limits=limits)
    assert case.message == "°" * 53 + "… [truncated, 100 bytes in all]"
    # (on the line of a cut, a column counts only the part of the value that was kept)
    with pytest.raises(MalformedXML, match="at line 1, column 98: not well-formed"):
        list(iter_cases(_OneByteReads(endless), limits=limits))


def test_positions_after_a_cut_value_still_match_the_file() -> None:
    """The line breaks in the dropped part of a value still count."""
    limits = ParseLimits(max_message_bytes=8, max_name_chars=4)
    head = b'<testsuite>\n<testcase name="a"><failure message="12345678\n\n\n"/></testcase>\n'
    malformed = head + b"\n<x>\n</y></testsuite>"
    long_name = head + b'<testcase name="12345"/></testsuite>'

    with pytest.raises(MalformedXML) as uncut:
        parse_bytes(malformed)
    with pytest.raises(MalformedXML) as cut_short:
        list(iter_cases(_OneByteReads(malformed), limits=limits))
    assert (
        str(cut_short.value)
        == str(uncut.value)
        == ("not well-formed XML at line 8, column 2: mismatched tag")
    )
    with pytest.raises(OverLimit, match="^testcase name at line 6 is 5 characters"):
        list(iter_cases(_OneByteReads(long_name), limits=limits))


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_token_bytes must be at least 1"):
        ParseLimits(max_token_bytes=0)


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
            suite_label=suite_label("", suite_name),
            outcome=case["outcome"],
            duration=case["duration"],
            message=None if case["outcome"] == "passed" else case["message"],
        )
        for case in cases
    ]
    assert parsed == expected


@settings(max_examples=60, deadline=None)
@given(
    cases=st.lists(
        st.tuples(_text, st.text(st.sampled_from("ab é€&<>\"'\n\t\U0001f600"), max_size=60)),
        min_size=1,
        max_size=4,
    ),
    max_message_bytes=st.integers(1, 40),
)
def test_cutting_messages_changes_nothing_else(
    cases: list[tuple[str, str]], max_message_bytes: int
) -> None:
    suite = TestSuite("suite")
    for name, message in cases:
        written = TestCase(name, "pkg.Class", 0.5)
        written.result = [Skipped(message)]
        suite.add_testcase(written)
    buffer = io.BytesIO()
    report = JUnitXml()
    report.add_testsuite(suite)
    report.write(buffer)
    data = buffer.getvalue()
    limits = ParseLimits(max_message_bytes=max_message_bytes)

    whole = parse_bytes(data)
    cut_short = list(iter_cases(_OneByteReads(data), limits=limits))

    assert [c[:5] for c in cut_short] == [c[:5] for c in whole]
    for short, full in zip(cut_short, whole, strict=True):
        kept, marker, _ = (short.message or "").partition("… [truncated, ")
        assert short.message == full.message or (
            marker and (full.message or "").startswith(kept.rstrip())
        )
