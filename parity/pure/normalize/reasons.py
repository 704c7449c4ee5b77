"""Canonical skip and failure reasons: one text, one fingerprint, for messages that differ only by
run-specific noise.

Decisions:

* People's wording and case are kept; punctuation too ("…on TPU." and "…on TPU" stay two
  reasons). Only framing and noise go: pytest's ``path/x.py:12:`` location, ``Skipped:`` /
  ``SKIPPED [1]`` / ``skip:`` / ``SkipTest:`` prefixes, unittest's ``skipped 'reason'`` quoting,
  and whitespace runs (collapsed to one space, so a reason is always one line).
* Noise becomes a placeholder: absolute paths → ``<path>`` (keeping ``/basename.ext`` when the
  last segment is a file name, since that is usually the stable, telling part), ``0x7f3a…`` →
  ``0x<hex>``, UUIDs, timestamps and times of day, line numbers (``x.py:<n>``, ``line <n>``),
  durations (``<n>s``), pids/threads, ports, IPv4 addresses (not a dotted version: after a
  version word or a comparison, or before ``-name``), torch.testing mismatch counts, and
  for failures only memory sizes (``<n> GiB``; a skip reason's "needs 16GB" is wording).
  Any other number is kept: issue numbers, ``TPUv4+``, ``tpu.version() < 3``, ``>= 2 devices``.
  URLs are never touched, so issue links survive for ``extract_issue_refs``.
* A failure's text is its meaningful first line: the exception line of the last Python
  traceback, else pytest's first ``E`` line, else the first non-blank line.
* The cleanup runs to a fixed point, so ``canonical_reason(r.text)`` gives ``r`` back.
  A step that would leave nothing (a message that is only ``Skipped:``) is not applied.
* The fingerprint is the SHA-1 of the text (UTF-8): same text, same fingerprint, forever, and
  independent of ``kind``.
* An expected failure (xfail) is a skip whose text starts ``expected failure`` (the parser's
  wording, ``parity.pure.junit.cases``): it counts as a skip, and ``is_expected_failure`` tells a
  reader it apart. ``expected failure`` alone is one whose xfail gave no reason.
"""

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from parity.pure.junit.cases import EXPECTED_FAILURE

ReasonKind = Literal["skip", "failure"]


@dataclass(frozen=True)
class CanonicalReason:
    text: str
    fingerprint: str


def canonical_reason(message: str, *, kind: ReasonKind = "skip") -> CanonicalReason | None:
    """The canonical form of a raw skip/failure message; None when nothing meaningful is left."""
    if not message or not message.strip():
        return None
    text = failure_line(message) if kind == "failure" else message
    for _ in range(_MAX_PASSES):
        cleaned = _one_pass(text, kind)
        if cleaned == text:
            break
        text = cleaned
    return CanonicalReason(text=text, fingerprint=reason_fingerprint(text)) if text else None


def is_expected_failure(text: str) -> bool:
    """Whether a canonical skip reason is an expected failure's (pytest's xfail, unittest's
    expectedFailure) rather than a skip's."""
    return text == EXPECTED_FAILURE or text.startswith(EXPECTED_FAILURE + ":")


def expected_failure_reason(text: str) -> str:
    """What an expected failure's reason says after ``expected failure:``; "" when its xfail
    gave none."""
    return text[len(EXPECTED_FAILURE) :].removeprefix(":").strip()


def reason_fingerprint(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


# Each pass only removes framing or turns digits into placeholders, so it settles in two or
# three passes; the cap guards against a pathological message, not a real one.
_MAX_PASSES = 8

_TRACEBACK = "Traceback (most recent call last):"
_PYTEST_E = re.compile(r"^\s*E +(\S.*)$")
_PYTEST_MARKER = re.compile(r"\.py:\d+|^\s*>", re.M)


def failure_line(message: str) -> str:
    """The line that says what went wrong; a one-line message is returned as it is."""
    lines = message.splitlines()
    nonblank = [line for line in lines if line.strip()]
    if len(nonblank) <= 1:
        return nonblank[0] if nonblank else ""
    starts = [i for i, line in enumerate(lines) if line.strip() == _TRACEBACK]
    if starts:
        # Frames are indented; the first line back at column 0 is "ExcType: message".
        after = lines[starts[-1] + 1 :]
        found = next((line for line in after if line.strip() and not line[0].isspace()), None)
        if found is not None:
            return found
    if _PYTEST_MARKER.search(message):
        for line in lines:
            if match := _PYTEST_E.match(line):
                return match.group(1)
    return nonblank[0]


_SPACE = re.compile(r"\s+")
_LOCATION = re.compile(
    r"(?:[A-Za-z]:)?[/\\]?(?:[\w.~+-]+[/\\])*[\w.~+-]+\.[A-Za-z]\w*:\d+(?::\d+)?:\s*"
)
_PREFIXES = (
    _LOCATION,  # pytest's "path/to/test_x.py:123: ", go's "x_test.go:12: "
    re.compile(r"SKIPPED\s*\[\d+\]\s*"),  # pytest -rs summary: "SKIPPED [1] "
    re.compile(r"(?i:skipped|skip)\s*:\s*"),
    re.compile(r"(?:unittest\.(?:case\.)?)?SkipTest\s*:\s*"),
)
_QUOTED = re.compile(r"(?i:skipped)\s+(['\"])(.*)\1", re.S)  # unittest's text log


def _one_pass(text: str, kind: ReasonKind) -> str:
    text = _SPACE.sub(" ", text).strip()
    text = _strip_prefixes(text)
    text = "".join(
        chunk if index % 2 else _scrub(chunk, kind) for index, chunk in enumerate(_URL.split(text))
    )
    return _SPACE.sub(" ", text).strip()


def _strip_prefixes(text: str) -> str:
    while True:
        quoted = _QUOTED.fullmatch(text)
        if quoted and quoted.group(2).strip():
            text = quoted.group(2).strip()
            continue
        for prefix in _PREFIXES:
            match = prefix.match(text)
            if match and text[match.end() :].strip():
                text = text[match.end() :].lstrip()
                break
        else:
            return text


# Split keeps the URLs at odd indexes: they are left verbatim.
_URL = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s<>\"'`]*[^\s<>\"'`.,;:)\]}])")

_PATH = re.compile(r"(?<![\w.:/~<>-])(?:[A-Za-z]:|~)?(?:[/\\][\w.@+,=~-]+){2,}[/\\]?")
_FILE_NAME = re.compile(r"[\w@+,=~-]*\.[A-Za-z]\w*")


def _path(match: re.Match[str]) -> str:
    last = re.split(r"[/\\]", match.group(0).rstrip("/\\"))[-1]
    return f"<path>/{last}" if _FILE_NAME.fullmatch(last) else "<path>"


# A dotted quad is an address unless it reads as a version: after a version word or a
# comparison ("MariaDB version 10.11.19.0", ">= 10.11.19.0"), glued to a word or a longer run of
# numbers ("v1.2.3.4", "19.3.0.0.0"), or before a "-name" ("10.11.19.0-MariaDB").
_IPV4 = re.compile(
    r"(?P<version>\b(?:[Vv]ersion|VERSION|[Rr]elease|[Vv]er)\b[\s:=]*|(?:[<>=!~]=|[<>])\s*)?"
    r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\w|\.\d|-[A-Za-z])"
)


def _address(match: re.Match[str]) -> str:
    return match.group(0) if match["version"] is not None else "<ip>"


_Rule = tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]
_NUMBER = r"\d+(?:\.\d+)?"
_SCRUB: tuple[_Rule, ...] = (
    (re.compile(r"\b[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b"), "<uuid>"),
    (
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
        ),
        "<timestamp>",
    ),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<time>"),
    (re.compile(r"\b0[xX][0-9a-fA-F]{6,}\b"), "0x<hex>"),
    (_PATH, _path),
    (re.compile(r"(\.[A-Za-z]\w{0,7}):\d+(?::\d+)?\b"), r"\1:<n>"),
    (re.compile(r"\b([Ll]ine)(\s*)\d+\b"), r"\1\2<n>"),
    # torch.testing.assert_close: how many elements and by how much, not which words.
    (
        re.compile(rf"(Mismatched elements: ){_NUMBER} / {_NUMBER} \({_NUMBER}%\)"),
        r"\1<n> / <n> (<n>%)",
    ),
    (
        re.compile(r"(Greatest (?:absolute|relative) difference: )[-+]?(?:\d[\w.+-]*|nan|inf)"),
        r"\1<n>",
    ),
    (re.compile(r"(at index )\([\d, ]+\)"), r"\1(<n>)"),
    (
        re.compile(
            rf"\b{_NUMBER}(\s?)(ms|us|µs|ns|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?)\b"
        ),
        r"<n>\1\2",
    ),
    (re.compile(r"\b(pid|PID|Pid|tid|TID|thread|Thread)(\s*[=:#]?\s*)\d+\b"), r"\1\2<n>"),
    (re.compile(r"\b([Pp]ort)(\s*[=:]?\s*)\d+\b"), r"\1\2<n>"),
    (re.compile(r"\b(localhost|(?:\d{1,3}\.){3}\d{1,3}):\d{2,5}\b"), r"\1:<n>"),
    (_IPV4, _address),
)
_FAILURE_ONLY: tuple[_Rule, ...] = (
    (re.compile(rf"\b{_NUMBER}(\s?)([KMGTP]i?B|bytes)\b"), r"<n>\1\2"),
)


def _scrub(text: str, kind: ReasonKind) -> str:
    rules = _SCRUB + _FAILURE_ONLY if kind == "failure" else _SCRUB
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return text
