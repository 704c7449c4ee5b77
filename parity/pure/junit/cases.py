"""What a <testcase> becomes: its outcome, message and duration, by the rules of each dialect."""

from __future__ import annotations

import math
import re
from typing import Literal, NamedTuple

from parity.pure.memo import Remembered

Outcome = Literal["passed", "failed", "error", "skipped"]

MAX_MESSAGE_CHARS = 2000
_INF = math.inf
# Appended to a message the parser kept only the start of (see ParseLimits.max_message_bytes).
_MARKER = re.compile(r"… \[truncated, [\d,]+ bytes in all\]\Z")
_MARKER_MAX_CHARS = 64

# Skips said by attribute alone, with no <skipped/> child:
# googletest writes result="skipped" (GTEST_SKIP) and result="suppressed" (DISABLED_ tests).
_SKIP_RESULTS = frozenset({"skipped", "suppressed"})
# googletest < 1.10 writes status="notrun" for DISABLED_ tests, the tst C framework "disabled",
# TeamCity's gtest fixture "ignored"; "skipped" is the plain spelling. Compared stripped and
# lowercased, since converters vary the case ("Ignored").
_SKIP_STATUSES = frozenset({"notrun", "skipped", "disabled", "ignored"})


# An expected failure is a skip in the arithmetic (the test does not pass) but not a skip to a
# reader: pytest writes <skipped type="pytest.xfail" message="<reason>"/> (message="" when the
# xfail gives none), unittest-xml-reporting <skipped type="XFAIL" message="expected failure:
# …"/>. Its message says so in words, the one channel a result has for it: "expected failure"
# alone when no reason was given, else "expected failure: <reason>".
EXPECTED_FAILURE = "expected failure"
_XFAIL_TYPES = frozenset({"pytest.xfail", "xfail"})  # compared stripped and lowercased


def is_xfail_type(skip_type: str | None) -> bool:
    """Whether a <skipped> element's ``type`` marks an expected failure."""
    return skip_type is not None and skip_type.strip().lower() in _XFAIL_TYPES


def expected_failure_message(message: str | None) -> str:
    """An expected failure's message: its reason after ``expected failure: `` (xmlrunner's
    already reads so), or ``expected failure`` when it gives none."""
    if message is None:
        return EXPECTED_FAILURE
    if message.lower().startswith(EXPECTED_FAILURE):
        return message
    return clip_message(f"{EXPECTED_FAILURE}: {message}") or EXPECTED_FAILURE


class ParsedCase(NamedTuple):
    """One <testcase> as read from the file, before any normalisation.

    A NamedTuple rather than a frozen dataclass: it is immutable too, and cheaper to build,
    which matters at a million cases per file.
    """

    classname: str  # "" when absent
    name: str  # "" when absent
    file: str | None  # the testcase's file= attribute, if any
    suite: str  # name of the innermost enclosing <testsuite>, "" if none
    suite_label: str  # the suites around it, outermost first (parity.pure.junit.suites)
    outcome: Outcome
    duration: float | None  # seconds; None if missing or unparseable
    message: str | None  # skip reason or failure/error message, at most MAX_MESSAGE_CHARS


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


def truncation_marker(size: int) -> str:
    """Ends a message cut while parsing; ``size`` is the whole message's size in bytes."""
    return f"… [truncated, {size:,} bytes in all]"


def clip_message(text: str | None) -> str | None:
    """Strip and truncate a message to MAX_MESSAGE_CHARS; None when nothing is left.

    A truncation marker at the end survives the clipping, so a reader still learns how long the
    message was.
    """
    if text is None:
        return None
    text = text.strip()
    if len(text) > MAX_MESSAGE_CHARS:
        marker = _MARKER.search(text, len(text) - _MARKER_MAX_CHARS)
        end = marker[0] if marker else ""
        text = text[: MAX_MESSAGE_CHARS - len(end)] + end
    return text or None


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line
    return ""


def case_result(
    attrs: dict[str, str], suite: str, suite_label: str, messages: dict[str, str | None]
) -> ParsedCase:
    """The case a <testcase> with these attributes and outcome children's messages stands for."""
    if messages:
        outcome, message = _outcome_of_children(messages)
    elif "result" in attrs or "status" in attrs:
        outcome, message = _outcome_of_attributes(attrs)
    else:
        outcome, message = "passed", None
    get = attrs.get
    duration = _durations[get("time")]
    # tuple.__new__ rather than ParsedCase(...): the same tuple without a Python-level call.
    return _tuple_new(
        ParsedCase,
        (
            # Codeception (PHP) writes class= instead of classname=.
            get("classname") or get("class", ""),
            get("name", ""),
            get("file"),
            suite,
            suite_label,
            outcome,
            duration,
            message,
        ),
    )


_tuple_new = tuple.__new__

# time= values repeat (pytest and JUnit write milliseconds): each is parsed once per process.
_durations = Remembered(parse_duration, keep=10_000)


def _outcome_of_children(messages: dict[str, str | None]) -> tuple[Outcome, str | None]:
    # An error outranks a failure, which outranks a skip: a case that failed and then reported
    # a skip (some runners do so on teardown) still failed.
    if "error" in messages:
        return "error", messages["error"]
    if "failure" in messages:
        return "failed", messages["failure"]
    if "xfail" in messages:
        return "skipped", expected_failure_message(messages["xfail"])
    return "skipped", messages["skipped"]


def _outcome_of_attributes(attrs: dict[str, str]) -> tuple[Outcome, str | None]:
    result = attrs.get("result")
    status = attrs.get("status")
    if (result is not None and result.strip().lower() in _SKIP_RESULTS) or (
        status is not None and status.strip().lower() in _SKIP_STATUSES
    ):
        return "skipped", clip_message(attrs.get("message"))
    return "passed", None
