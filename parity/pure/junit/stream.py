"""Feeding a report's bytes to expat in chunks, so that no token costs more than its limits.

Expat before 2.6 (this Python has 2.5) rescans an unfinished token from its start on every
chunk it is fed, and pyexpat hands it at most 1 MiB per call, so the time one huge token costs
grows with its square: an attribute of tens of megabytes held a worker for minutes. Text and
CDATA are reported as they arrive and cost nothing of the kind. After each chunk, expat's
CurrentByteIndex is where its unfinished token starts, so the bytes fed since then are that
token: the feeder keeps them and, once they pass ``max_message_bytes``, looks at what the token
is. An attribute value that is not a name is cut there (the rest is skipped unparsed, and the
reader is told its size); any other token is fed in growing chunks (up to 1 MiB) and refused
past ``max_token_bytes``.
"""

from __future__ import annotations

import pyexpat
from collections.abc import Iterator
from itertools import chain
from typing import BinaryIO

from parity.pure.junit.cases import ParsedCase
from parity.pure.junit.errors import MalformedXML, OverLimit
from parity.pure.junit.limits import DEFAULT_LIMITS, MiB, ParseLimits
from parity.pure.junit.reader import BIG, CaseReader

_CHUNK_BYTES = 64 * 1024
_BIG_CHUNK_BYTES = MiB  # what pyexpat feeds expat per call anyway
_UTF8_BOM = b"\xef\xbb\xbf"
_XML_SPACE = b" \t\r\n"
# Attribute values that are kept whole up to the name limit (the reader checks it): cutting a
# name would merge different tests.
_NAMES = frozenset({b"name", b"classname", b"class", b"file"})
_UTF8_CONTINUATION = bytes(range(0x80, 0xC0))


def iter_cases(stream: BinaryIO, *, limits: ParseLimits = DEFAULT_LIMITS) -> Iterator[ParsedCase]:
    """Yield the test cases of a JUnit XML stream in document order, reading it in chunks.

    Cases are yielded as their chunk is parsed, so an error late in the file is raised after
    earlier cases were yielded: callers that must be all-or-nothing collect first.
    """
    return chain.from_iterable(iter_case_batches(stream, limits=limits))


def iter_case_batches(
    stream: BinaryIO, *, limits: ParseLimits = DEFAULT_LIMITS
) -> Iterator[list[ParsedCase]]:
    """``iter_cases``, a list per chunk parsed: a loop over a list costs less per case than
    one more generator does, at a million cases per file."""
    chunk, skipped_lines, skipped_cols = _skip_leading_blanks(stream)
    if not chunk:
        raise MalformedXML("the file is empty")
    parser = pyexpat.ParserCreate()
    feeder = _Feeder(parser, stream, chunk, limits=limits, lines_before=skipped_lines)
    reader = CaseReader(parser, limits=limits, notes=feeder.notes, line=feeder.line)
    try:
        while feeder.feed():
            if cases := reader.take():
                yield cases
    except pyexpat.ExpatError as exc:
        raise _malformed(exc, skipped_lines + feeder.lines_dropped, skipped_cols) from None
    if cases := reader.take():
        yield cases


class _Feeder:
    """Feeds a stream to an expat parser; ``notes`` and ``line()`` are for the reader.

    ``notes`` tell the reader which tags need a closer look: under ``BIG`` while the feeder
    feeds a token it watches (over ``min(max_message_bytes, max_token_bytes)``) and what follows
    it in the same chunks, plus the attributes whose values it cut (name: size in the file),
    for the tag reported next. Any other tag fits in one chunk plus what was pending before it,
    so when the name limit is at least that, no other tag can hold a name over it; when the
    limit is smaller, ``BIG`` stays noted for good.
    """

    def __init__(
        self,
        parser: pyexpat.XMLParserType,
        stream: BinaryIO,
        first: bytes,
        *,
        limits: ParseLimits,
        lines_before: int,
    ) -> None:
        self._parser = parser
        self._stream = stream
        self._ahead = first  # read but not fed yet
        self._limits = limits
        self._watch = min(limits.max_message_bytes, limits.max_token_bytes)
        self._fed = 0
        self._token = bytearray()  # the bytes of expat's unfinished token
        self._lines_before = lines_before
        # Line breaks inside cut attribute values, so that later lines are right (a column on
        # the line of a cut counts only the part of the value that was kept).
        self.lines_dropped = 0
        self._names_fit = limits.max_name_chars >= _CHUNK_BYTES + self._watch
        self.notes: dict[str, int] = {} if self._names_fit else {BIG: 0}

    def line(self) -> int:
        """The line of the uploaded file expat is at (a tag's first line, in a handler)."""
        return self._parser.CurrentLineNumber + self._lines_before + self.lines_dropped

    def feed(self) -> bool:
        """Feed the next chunk, or finish the parse and return False at the end."""
        chunk = self._read(_CHUNK_BYTES)
        if not chunk:
            self._parser.Parse(b"", True)
            return False
        self._parse(chunk)
        if len(self._token) > self._watch:
            self._feed_big_token()
        return True

    def _parse(self, chunk: bytes) -> None:
        self._parser.Parse(chunk, False)
        self._fed += len(chunk)
        pending = self._fed - self._parser.CurrentByteIndex
        token = self._token
        if pending <= len(chunk):
            token[:] = chunk[len(chunk) - pending :]
        else:
            token += chunk
            del token[: len(token) - pending]

    def _feed_big_token(self) -> None:
        """Feed on until the unfinished token ends, cutting message values and refusing it past
        max_token_bytes."""
        limits = self._limits
        self.notes[BIG] = 0
        while len(self._token) > self._watch:
            if len(self._token) > limits.max_token_bytes:
                raise OverLimit(
                    f"a single XML tag at line {self.line():,} is over "
                    f"{_human(limits.max_token_bytes)} (the limit for one tag or comment)"
                )
            # As much again as the token has (up to what pyexpat feeds per call): few rescans,
            # and what follows the token is read no further ahead than that.
            size = min(len(self._token), _BIG_CHUNK_BYTES)
            value = _open_value(self._token)
            if value is not None and value[0] not in _NAMES:
                attribute, quote, start = value
                kept = len(self._token) - start
                if kept < limits.max_message_bytes:
                    size = limits.max_message_bytes - kept
                else:
                    self._cut_value(attribute, quote, start)
            chunk = self._read_fully(min(size, limits.max_token_bytes + 1 - len(self._token)))
            if not chunk:
                return  # the end of the file: expat reports the unclosed token
            self._parse(chunk)
        if self._names_fit:
            del self.notes[BIG]

    def _cut_value(self, attribute: bytes, quote: bytes, start: int) -> None:
        """Cut the attribute value at ``start`` where it is: finish its last character or
        reference, skip the rest unparsed, feed the closing quote, and note the value's size."""
        if finish := self._bytes_to_cut_point(start, quote):
            self._parse(self._read_fully(finish))
        kept = len(self._token) - start
        dropped = 0
        while chunk := self._read_fully(_BIG_CHUNK_BYTES):
            closing = chunk.find(quote)
            if closing >= 0:
                self._ahead = chunk[closing + 1 :] + self._ahead
                chunk = chunk[:closing]
            dropped += len(chunk)
            self.lines_dropped += chunk.count(b"\n")  # (a lone CR is a line end too: unseen)
            if closing >= 0:
                self._parse(quote)
                break
        if dropped:  # a value that ends right at the limit is whole
            self.notes[attribute.decode("utf-8", "replace")] = kept + dropped

    def _bytes_to_cut_point(self, start: int, quote: bytes) -> int:
        """How many more bytes the value at ``start`` needs to end on a whole UTF-8 character
        or entity reference. One too long to be real (a reference over 64 bytes) is cut as it
        is, and expat calls it malformed."""
        ahead = self._peek(64)
        token = self._token
        if token.rfind(b"&", start) > token.rfind(b";", start):
            semicolon, closing = ahead.find(b";"), ahead.find(quote)
            return semicolon + 1 if semicolon >= 0 and not 0 <= closing < semicolon else 0
        return min(3, len(ahead) - len(ahead.lstrip(_UTF8_CONTINUATION)))

    def _read(self, size: int) -> bytes:
        if self._ahead:
            data, self._ahead = self._ahead[:size], self._ahead[size:]
            return data
        return self._stream.read(size)

    def _read_fully(self, size: int) -> bytes:
        """``size`` bytes, or fewer at the end: a big token must not be fed in short reads."""
        data = self._read(size)
        if 0 < len(data) < size:
            parts, got = [data], len(data)
            while got < size and (more := self._read(size - got)):
                parts.append(more)
                got += len(more)
            data = b"".join(parts)
        return data

    def _peek(self, size: int) -> bytes:
        while len(self._ahead) < size:
            more = self._stream.read(size - len(self._ahead))
            if not more:
                break
            self._ahead += more
        return self._ahead[:size]


def _open_value(token: bytearray) -> tuple[bytes, bytes, int] | None:
    """If ``token`` is an unfinished start tag that ends inside an attribute value: the
    attribute's name, its quote, and where its value starts.

    In a start tag a quote can only open or close a value, so finding quotes is enough; bytes
    methods, since a regular expression reads a huge tag name far more slowly.
    """
    if token[:1] != b"<" or token[1:2] in (b"/", b"!", b"?"):
        return None  # an end tag, comment, processing instruction or declaration
    position = 1
    while True:
        quotes = [at for at in (token.find(b'"', position), token.find(b"'", position)) if at >= 0]
        if not quotes:
            return None
        opening = min(quotes)
        quote = bytes(token[opening : opening + 1])
        closing = token.find(quote, opening + 1)
        if closing < 0:
            # what lies between the previous value and this one: ' name=' (or '<tag name=')
            words = bytes(token[position:opening]).split(b"=")[0].split()
            return (words[-1] if words else b""), quote, opening + 1
        position = closing + 1


def _human(size: int) -> str:
    return f"{size / MiB:g} MiB" if size >= MiB else f"{size:,} bytes"


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
