"""Expat handlers that turn start/end events into finished ``ParsedCase`` objects."""

from __future__ import annotations

import pyexpat
from collections.abc import Callable

from parity.pure.junit.cases import (
    ParsedCase,
    case_result,
    clip_message,
    first_line,
    is_xfail_type,
    truncation_marker,
)
from parity.pure.junit.errors import ForbiddenXML, NotJUnit, OverLimit
from parity.pure.junit.limits import ParseLimits
from parity.pure.junit.suites import suite_label

_ROOTS = frozenset({"testsuites", "testsuite"})
# Direct children of <testcase> that decide the outcome. rerunFailure, flakyFailure, rerun and
# friends are deliberately absent: they record earlier attempts, not the final result.
_OUTCOME_CHILDREN = frozenset({"error", "failure", "skipped"})
# Attributes refused rather than cut past the name limit (see ParseLimits.max_name_chars).
_CHECKED_NAMES = {"testcase": ("name", "classname", "class", "file"), "testsuite": ("name",)}
# The feeder's note that tags are being fed in big chunks (see stream._Feeder).
BIG = ""
_FORBIDDEN = (
    "XML with a DTD or entity declarations is refused (possible XML bomb or external-entity attack)"
)


class CaseReader:
    """Handlers for one parse. Open testsuites and testcases are remembered with their element
    depth, so ends are matched by depth alone and nothing else about the document is kept.
    This runs once per element of a file that may hold a million cases, hence the cached
    innermost case and suite.

    ``notes`` are the feeder's (see ``stream._Feeder``): while any is there, each tag's names
    are checked against their limit, and the values it cut are marked. ``line`` gives the
    current line of the uploaded file.
    """

    def __init__(
        self,
        parser: pyexpat.XMLParserType,
        *,
        limits: ParseLimits,
        notes: dict[str, int],
        line: Callable[[], int],
    ) -> None:
        parser.buffer_text = True
        parser.StartElementHandler = self._start_root
        parser.EndElementHandler = self._end
        # The defusedxml defences: refuse before expat expands or fetches anything.
        parser.StartDoctypeDeclHandler = _forbid
        parser.EntityDeclHandler = _forbid
        parser.UnparsedEntityDeclHandler = _forbid
        parser.ExternalEntityRefHandler = _forbid
        self.parser = parser
        self._max_name = limits.max_name_chars
        self._max_text = limits.max_message_bytes
        self._notes = notes
        self._line = line
        self._done: list[ParsedCase] = []
        self._depth = 0
        # Innermost open testsuite: its depth, name and label, and the ones around it.
        self._suite_depth = 0
        self._suite = self._suite_label = ""
        self._outer_suites: list[tuple[int, str, str]] = []
        # Innermost open testcase (depth 0: none): attributes, suite name and label, and
        # messages[kind] set by its first child of that kind. Cases nested in cases (seen in the
        # wild) wait outside.
        self._case_depth = 0
        self._case_attrs: dict[str, str] = {}
        self._case_suite = self._case_label = ""
        self._case_messages: dict[str, str | None] = {}
        self._outer_cases: list[tuple[int, dict[str, str], str, str, dict[str, str | None]]] = []
        # The outcome child whose text is being collected (depth 0: none), and its size so far
        # in (UTF-8) bytes, counted on past what is kept.
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
        local = tag[tag.rfind(":") + 1 :] if ":" in tag else tag
        if self._notes:
            self._check_tag(local, attrs)
        if local == "testcase":
            if self._case_depth:
                self._outer_cases.append(
                    (
                        self._case_depth,
                        self._case_attrs,
                        self._case_suite,
                        self._case_label,
                        self._case_messages,
                    )
                )
            self._case_depth, self._case_attrs = depth, attrs
            self._case_suite, self._case_label = self._suite, self._suite_label
            self._case_messages = {}
        elif local == "testsuite":
            self._outer_suites.append((self._suite_depth, self._suite, self._suite_label))
            name = attrs.get("name", "")
            self._suite_depth, self._suite = depth, name
            self._suite_label = suite_label(self._suite_label, name, attrs.get("hostname", ""))
        elif depth == self._case_depth + 1 and local in _OUTCOME_CHILDREN:
            self._start_outcome(depth, local, attrs)

    def _check_tag(self, local: str, attrs: dict[str, str]) -> None:
        """Mark the values the feeder cut, and refuse names over their limit."""
        notes = self._notes
        for name in [name for name in notes if name != BIG]:
            size = notes.pop(name)
            if name in attrs:
                attrs[name] += truncation_marker(size)
        names = _CHECKED_NAMES.get(local, ())
        for name in names:
            length = len(attrs.get(name, ""))
            if length > self._max_name:
                raise OverLimit(
                    f"{local} {name} at line {self._line():,} is {length:,} characters; "
                    f"the limit is {self._max_name:,}"
                )

    def _start_outcome(self, depth: int, kind: str, attrs: dict[str, str]) -> None:
        if kind == "skipped" and is_xfail_type(attrs.get("type")):
            kind = "xfail"  # an expected failure: told apart from a skip (cases.py)
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
        size = self._text_size
        if size < self._max_text:
            self._text.append(data)
        self._text_size = size + len(data.encode())

    def _end(self, tag: str) -> None:
        depth = self._depth
        self._depth = depth - 1
        if depth == self._case_depth:
            self._done.append(
                case_result(
                    self._case_attrs, self._case_suite, self._case_label, self._case_messages
                )
            )
            if self._outer_cases:
                (
                    self._case_depth,
                    self._case_attrs,
                    self._case_suite,
                    self._case_label,
                    self._case_messages,
                ) = self._outer_cases.pop()
            else:
                self._case_depth = 0
        elif depth == self._text_depth:
            self._end_outcome()
        elif depth == self._suite_depth:
            self._suite_depth, self._suite, self._suite_label = self._outer_suites.pop()

    def _end_outcome(self) -> None:
        self.parser.CharacterDataHandler = None
        text = "".join(self._text)
        if self._text_size > self._max_text:
            kept = text.encode()[: self._max_text].decode(errors="ignore")
            text = kept + truncation_marker(self._text_size)
        if self._text_kind not in ("skipped", "xfail"):
            text = first_line(text)  # failure bodies are stack traces: the first line says it
        self._case_messages[self._text_kind] = clip_message(text)
        self._text_depth, self._text = 0, []


def _forbid(*_args: object) -> None:
    raise ForbiddenXML(_FORBIDDEN)
