"""Streaming JUnit/xUnit XML parser: bytes in, one ``ParsedCase`` per ``<testcase>`` out.

Pure: imports nothing from Django. It drives expat (``pyexpat``) directly, with the defences
defusedxml installs (any DTD, entity declaration or external reference aborts the parse before
expat expands or fetches anything), instead of ``defusedxml.ElementTree.iterparse``: that one
swaps in the pure-Python ``XMLParser`` and builds an Element per node, so its bare loop is
already about twice as slow as the stdlib's (bench/parse_bench.py). Expat callbacks build
nothing, so memory stays flat however many cases a file holds: only the case being read is
kept, with at most ``_TEXT_CAP`` characters of message text.
"""

from __future__ import annotations

import math
import pyexpat
from collections.abc import Iterator
from typing import BinaryIO, Literal, NamedTuple

Outcome = Literal["passed", "failed", "error", "skipped"]

MAX_MESSAGE_CHARS = 2000
_CHUNK_BYTES = 64 * 1024
# Stop buffering a failure's text past this: the message keeps 2000 characters at most, the
# margin lets the first non-empty line be found after a block of blank lines.
_TEXT_CAP = 8 * MAX_MESSAGE_CHARS
_UTF8_BOM = b"\xef\xbb\xbf"
_XML_SPACE = b" \t\r\n"
_INF = math.inf

_ROOTS = frozenset({"testsuites", "testsuite"})
# Direct children of <testcase> that decide the outcome. rerunFailure, flakyFailure, rerun and
# friends are deliberately absent: they record earlier attempts, not the final result.
_OUTCOME_CHILDREN = frozenset({"error", "failure", "skipped"})
# Skips said by attribute alone, with no <skipped/> child:
# googletest writes result="skipped" (GTEST_SKIP) and result="suppressed" (DISABLED_ tests).
_SKIP_RESULTS = frozenset({"skipped", "suppressed"})
# googletest < 1.10 writes status="notrun" for DISABLED_ tests, the tst C framework "disabled",
# TeamCity's gtest fixture "ignored"; "skipped" is the plain spelling. Compared stripped and
# lowercased, since converters vary the case ("Ignored").
_SKIP_STATUSES = frozenset({"notrun", "skipped", "disabled", "ignored"})


class ParsedCase(NamedTuple):
    """One <testcase> as read from the file, before any normalisation.

    A NamedTuple rather than a frozen dataclass: it is immutable too, and building one costs a
    third as much, which matters at a million cases per file.
    """

    classname: str  # "" when absent
    name: str  # "" when absent
    file: str | None  # the testcase's file= attribute, if any
    suite: str  # name of the innermost enclosing <testsuite>, "" if none
    outcome: Outcome
    duration: float | None  # seconds; None if missing or unparseable
    message: str | None  # skip reason or failure/error message, at most MAX_MESSAGE_CHARS


class JUnitError(Exception):
    """Base of every parse error; str(e) is a clear, user-facing sentence."""


class MalformedXML(JUnitError):
    """Not well-formed XML: empty, truncated, plain text, junk after the root."""


class ForbiddenXML(JUnitError):
    """A DTD, entity declaration or external reference: refused before anything is expanded."""


class NotJUnit(JUnitError):
    """Well-formed XML whose root element is not <testsuites> or <testsuite>."""


_FORBIDDEN = (
    "XML with a DTD or entity declarations is refused (possible XML bomb or external-entity attack)"
)


def iter_cases(stream: BinaryIO) -> Iterator[ParsedCase]:
    """Yield the test cases of a JUnit XML stream in document order, reading it in chunks.

    Cases are yielded as their chunk is parsed, so an error late in the file is raised after
    earlier cases were yielded: callers that must be all-or-nothing collect first.
    """
    chunk, skipped_lines, skipped_cols = _skip_leading_blanks(stream)
    if not chunk:
        raise MalformedXML("the file is empty")
    reader = _CaseReader()
    try:
        while chunk:
            reader.parser.Parse(chunk, False)
            yield from reader.take()
            chunk = stream.read(_CHUNK_BYTES)
        reader.parser.Parse(b"", True)
    except pyexpat.ExpatError as exc:
        raise _malformed(exc, skipped_lines, skipped_cols) from None
    yield from reader.take()


def _skip_leading_blanks(stream: BinaryIO) -> tuple[bytes, int, int]:
    """Drop a UTF-8 BOM and blank lines before the XML declaration, which expat rejects.

    Returns the first chunk that starts with content (b"" if there is none) and how many
    lines and columns were dropped, so error positions still match the uploaded file.
    """
    chunk = stream.read(_CHUNK_BYTES)
    while 0 < len(chunk) < len(_UTF8_BOM):  # short reads must not split the BOM
        more = stream.read(_CHUNK_BYTES)
        if not more:
            break
        chunk += more
    chunk = chunk.removeprefix(_UTF8_BOM)
    lines = cols = 0
    while True:
        content = chunk.lstrip(_XML_SPACE)
        blanks = chunk[: len(chunk) - len(content)]
        newlines = blanks.count(b"\n")
        lines += newlines
        cols = len(blanks) - blanks.rfind(b"\n") - 1 if newlines else cols + len(blanks)
        if content:
            return content, lines, cols
        chunk = stream.read(_CHUNK_BYTES)
        if not chunk:
            return b"", lines, cols


def _malformed(exc: pyexpat.ExpatError, skipped_lines: int, skipped_cols: int) -> MalformedXML:
    line, column = exc.lineno, exc.offset
    if line == 1:
        column += skipped_cols
    reason = pyexpat.errors.messages[exc.code]
    if reason == pyexpat.errors.XML_ERROR_NO_ELEMENTS:
        reason += " (the file ends before the XML is complete: was it truncated?)"
    return MalformedXML(
        f"not well-formed XML at line {line + skipped_lines}, column {column}: {reason}"
    )


def parse_duration(value: str | None) -> float | None:
    """Seconds from a ``time`` attribute; None when missing, garbage, negative or infinite."""
    if value is None:
        return None
    try:
        seconds = float(value)  # float() itself tolerates surrounding whitespace
    except ValueError:
        try:
            # Some producers format with thousands separators ("1,234.5").
            seconds = float(value.replace(",", ""))
        except ValueError:
            return None
    # A negative or non-finite elapsed time is a producer bug; storing it would skew sums.
    # (NaN fails both comparisons.)
    return seconds if 0 <= seconds < _INF else None


def clip_message(text: str | None) -> str | None:
    """Strip and truncate a message to MAX_MESSAGE_CHARS; None when nothing is left."""
    if text is None:
        return None
    text = text.strip()[:MAX_MESSAGE_CHARS]
    return text or None


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line
    return ""


def _outcome(attrs: dict[str, str], messages: dict[str, str | None]) -> tuple[Outcome, str | None]:
    # An error outranks a failure, which outranks a skip: a case that failed and then reported
    # a skip (some runners do so on teardown) still failed.
    if messages:
        if "error" in messages:
            return "error", messages["error"]
        if "failure" in messages:
            return "failed", messages["failure"]
        return "skipped", messages["skipped"]
    result = attrs.get("result")
    status = attrs.get("status")
    if (result is not None and result.strip().lower() in _SKIP_RESULTS) or (
        status is not None and status.strip().lower() in _SKIP_STATUSES
    ):
        return "skipped", clip_message(attrs.get("message"))
    return "passed", None


def _case_result(attrs: dict[str, str], suite: str, messages: dict[str, str | None]) -> ParsedCase:
    outcome, message = _outcome(attrs, messages)
    get = attrs.get
    return ParsedCase(
        # Codeception (PHP) writes class= instead of classname=.
        get("classname") or get("class", ""),
        get("name", ""),
        get("file"),
        suite,
        outcome,
        parse_duration(get("time")),
        message,
    )


class _CaseReader:
    """Expat handlers that turn start/end events into finished ``ParsedCase`` objects.

    Open testsuites and testcases are remembered with their element depth, so ends are matched
    by depth alone and nothing else about the document is kept. This runs once per element of
    a file that may hold a million cases, hence the cached innermost case and suite.
    """

    def __init__(self) -> None:
        parser = pyexpat.ParserCreate()
        parser.buffer_text = True
        parser.StartElementHandler = self._start_root
        parser.EndElementHandler = self._end
        # The defusedxml defences: refuse before expat expands or fetches anything.
        parser.StartDoctypeDeclHandler = _forbid
        parser.EntityDeclHandler = _forbid
        parser.UnparsedEntityDeclHandler = _forbid
        parser.ExternalEntityRefHandler = _forbid
        self.parser = parser
        self._done: list[ParsedCase] = []
        self._depth = 0
        # Innermost open testsuite: its depth and name, and the ones around it.
        self._suite_depth = 0
        self._suite = ""
        self._outer_suites: list[tuple[int, str]] = []
        # Innermost open testcase (depth 0: none): attributes, suite, and messages[kind] set by
        # its first child of that kind. Cases nested in cases (seen in the wild) wait outside.
        self._case_depth = 0
        self._case_attrs: dict[str, str] = {}
        self._case_suite = ""
        self._case_messages: dict[str, str | None] = {}
        self._outer_cases: list[tuple[int, dict[str, str], str, dict[str, str | None]]] = []
        # The outcome child whose text is being collected (depth 0: none).
        self._text_depth = 0
        self._text_kind = ""
        self._text: list[str] = []
        self._text_size = 0

    def take(self) -> list[ParsedCase]:
        done, self._done = self._done, []
        return done

    def _start_root(self, tag: str, attrs: dict[str, str]) -> None:
        local = tag[tag.rfind(":") + 1 :]
        if local not in _ROOTS:
            raise NotJUnit(
                f"the root element is <{local}>, not <testsuites> or <testsuite>: "
                "this is not a JUnit XML report"
            )
        self.parser.StartElementHandler = self._start
        self._start(tag, attrs)

    def _start(self, tag: str, attrs: dict[str, str]) -> None:
        depth = self._depth = self._depth + 1
        # Namespace prefixes are dropped: expat runs without namespace processing, so a prefix
        # is just part of the name ("ns2:testcase").
        local = tag[tag.rfind(":") + 1 :]
        if local == "testcase":
            if self._case_depth:
                self._outer_cases.append(
                    (self._case_depth, self._case_attrs, self._case_suite, self._case_messages)
                )
            self._case_depth, self._case_attrs = depth, attrs
            self._case_suite, self._case_messages = self._suite, {}
        elif local == "testsuite":
            self._outer_suites.append((self._suite_depth, self._suite))
            self._suite_depth, self._suite = depth, attrs.get("name", "")
        elif depth == self._case_depth + 1 and local in _OUTCOME_CHILDREN:
            self._start_outcome(depth, local, attrs)

    def _start_outcome(self, depth: int, kind: str, attrs: dict[str, str]) -> None:
        messages = self._case_messages
        if kind in messages:
            return  # the first child of a kind gives the message
        message = clip_message(attrs.get("message"))
        messages[kind] = message
        if message is None and not self._text_depth:
            self._text_depth, self._text_kind = depth, kind
            self._text, self._text_size = [], 0
            # Text is only wanted here; elsewhere (system-out, properties) expat need not call
            # back at all.
            self.parser.CharacterDataHandler = self._collect

    def _collect(self, data: str) -> None:
        if self._text_size < _TEXT_CAP:
            self._text.append(data)
            self._text_size += len(data)

    def _end(self, tag: str) -> None:
        depth = self._depth
        self._depth = depth - 1
        if depth == self._case_depth:
            self._done.append(_case_result(self._case_attrs, self._case_suite, self._case_messages))
            if self._outer_cases:
                outer = self._outer_cases.pop()
                self._case_depth, self._case_attrs, self._case_suite, self._case_messages = outer
            else:
                self._case_depth = 0
        elif depth == self._text_depth:
            self._end_outcome()
        elif depth == self._suite_depth:
            self._suite_depth, self._suite = self._outer_suites.pop()

    def _end_outcome(self) -> None:
        self.parser.CharacterDataHandler = None
        text = "".join(self._text)
        if self._text_kind != "skipped":
            text = _first_line(text)  # failure bodies are stack traces: the first line says it
        self._case_messages[self._text_kind] = clip_message(text)
        self._text_depth, self._text = 0, []


def _forbid(*_args: object) -> None:
    raise ForbiddenXML(_FORBIDDEN)
