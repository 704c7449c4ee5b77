"""COPY text waiting for its table: in memory, then on disk past a few MB, so that a million
lines held back until the end of an upload never sit in memory whole."""

import shutil
import tempfile

from ingest.writer.copy_text import copy_text
from ingest.writer.rows import ResultRow

_MEMORY_BYTES = 8 << 20
_COPY_READ_BYTES = 1 << 18


class Spool:
    """Encoded COPY lines, written in pieces and sent to a table in one COPY."""

    def __init__(self) -> None:
        # Closed by close(): a spool lives as long as its writer, across many COPY statements.
        self.file = tempfile.SpooledTemporaryFile(max_size=_MEMORY_BYTES)  # noqa: SIM115
        self.count = 0  # lines held

    def write(self, data: bytes, lines: int) -> None:
        self.file.write(data)
        self.count += lines

    def move_to(self, other: "Spool") -> None:
        """Hand every line to ``other``, and hold none."""
        self.file.seek(0)
        shutil.copyfileobj(self.file, other.file)
        other.count += self.count
        self.clear()

    def copy_to(self, cursor, statement) -> None:
        """COPY the lines with ``statement`` (``… FROM STDIN``), and hold none."""
        if not self.count:
            return
        self.file.seek(0)
        cursor.copy_expert(statement, self.file, size=_COPY_READ_BYTES)
        self.clear()

    def clear(self) -> None:
        self.file.seek(0)
        self.file.truncate()
        self.count = 0

    def close(self) -> None:
        self.file.close()


class NewTests:
    """The upload's new tests that are not in their table yet, as COPY lines of
    ``(id, project_id, key, file, class_name, name)``.

    Lines gather in memory as tests are found; the writer then either ``flush``es them to wait
    for the end of the upload, or ``take``s them to stream into the table at once. What it
    takes is kept (``streamed``) until that COPY is known to hold (``streamed_kept``) or to
    have failed (``streamed_lost``, and they wait again).
    """

    def __init__(self, *, project_id: int) -> None:
        self.project = project_id
        self.lines: list[str] = []
        self.waiting = Spool()
        self.streamed = Spool()

    @property
    def count(self) -> int:
        return self.waiting.count + len(self.lines)

    def add(self, test_id: int, row: ResultRow) -> None:
        self.lines.append(
            f"{test_id}\t{self.project}\t{copy_text(row.key)}\t{copy_text(row.file)}\t"
            f"{copy_text(row.class_name)}\t{copy_text(row.name)}\n"
        )

    def flush(self) -> None:
        if self.lines:
            self.waiting.write("".join(self.lines).encode(), len(self.lines))
            self.lines.clear()

    def take(self) -> bytes:
        data = "".join(self.lines).encode()
        self.streamed.write(data, len(self.lines))
        self.lines.clear()
        return data

    def streamed_kept(self) -> None:
        self.streamed.clear()

    def streamed_lost(self) -> None:
        self.streamed.move_to(self.waiting)

    def copy_to(self, cursor, statement) -> None:
        """COPY every waiting test with ``statement``, and hold none."""
        self.flush()
        self.waiting.copy_to(cursor, statement)

    def close(self) -> None:
        self.waiting.close()
        self.streamed.close()
