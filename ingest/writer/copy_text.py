"""COPY's text format, and feeding a generator of encoded chunks to ``copy_expert``."""

import io
from collections.abc import Iterator

import psycopg2

NULL = "\\N"
_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\x00": ""})


def copy_text(value: str) -> str:
    """A text field: backslash escapes for the characters COPY reads as structure; NUL, which
    Postgres text cannot hold, is dropped. Most values need none: tab, newline, CR and NUL are
    not printable, so one C scan tells (and a translate costs several times as much)."""
    if value.isprintable() and "\\" not in value:
        return value
    return value.translate(_ESCAPES)


class ChunkReader(io.RawIOBase):
    """A read()-able view of an iterator of byte chunks, for psycopg2's ``copy_expert``.

    An exception raised by the iterator (bad content found while parsing) reaches psycopg2,
    which ends the COPY with QueryCanceled; ``copy_from_chunks`` raises the original instead.
    """

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._rest = b""
        self.error: Exception | None = None

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        wanted = size if size > 0 else 1 << 20
        parts, filled = [self._rest], len(self._rest)
        while filled < wanted:
            try:
                chunk = next(self._chunks, None)
            except Exception as exc:
                self.error = exc
                raise
            if chunk is None:
                break
            parts.append(chunk)
            filled += len(chunk)
        data = b"".join(parts)
        self._rest = data[wanted:]
        return data[:wanted]


def copy_from_chunks(cursor, statement, chunks: Iterator[bytes]) -> None:
    """Run a ``COPY … FROM STDIN`` fed by ``chunks``; an error of the iterator is raised as
    itself, not as the QueryCanceled psycopg2 turns it into."""
    reader = ChunkReader(chunks)
    try:
        cursor.copy_expert(statement, reader, size=1 << 18)
    except psycopg2.Error:
        if reader.error is not None:
            raise reader.error from None
        raise
