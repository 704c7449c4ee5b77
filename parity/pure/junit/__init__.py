"""Streaming JUnit/xUnit XML parser: bytes in, one ``ParsedCase`` per ``<testcase>`` out.

Pure: imports nothing from Django. It drives expat (``pyexpat``) directly, with the defences
defusedxml installs (any DTD, entity declaration or external reference aborts the parse before
expat expands or fetches anything), instead of ``defusedxml.ElementTree.iterparse``: that one
swaps in the pure-Python ``XMLParser`` and builds an Element per node, so its bare loop is
already slower than the stdlib's (bench/parse_bench.py). Expat callbacks build
nothing, so memory stays flat however many cases a file holds: only the case being read is
kept, and ``ParseLimits`` bound what one message, name or tag may cost.

``stream`` feeds the bytes to expat within the limits, ``reader`` turns expat's events into
cases, ``cases`` holds the rules that decide a case's outcome and message.
"""

from parity.pure.junit.cases import (
    MAX_MESSAGE_CHARS,
    Outcome,
    ParsedCase,
    clip_message,
    parse_duration,
)
from parity.pure.junit.errors import ForbiddenXML, JUnitError, MalformedXML, NotJUnit, OverLimit
from parity.pure.junit.limits import ParseLimits
from parity.pure.junit.stream import iter_case_batches, iter_cases

__all__ = [
    "MAX_MESSAGE_CHARS",
    "ForbiddenXML",
    "JUnitError",
    "MalformedXML",
    "NotJUnit",
    "Outcome",
    "OverLimit",
    "ParseLimits",
    "ParsedCase",
    "clip_message",
    "iter_case_batches",
    "iter_cases",
    "parse_duration",
]
