"""COPY text waiting for its table: in memory, then on disk past a few MB, so that a million
new tests waiting for the end of an upload never sit in memory whole."""

import tempfile

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

    def copy_to(self, cursor, statement) -> None:
        """COPY the lines with ``statement`` (``… FROM STDIN``), and hold none."""
        if not self.count:
            return
        self.file.seek(0)
        cursor.copy_expert(statement, self.file, size=_COPY_READ_BYTES)
        self.file.seek(0)
        self.file.truncate()
        self.count = 0

    def close(self) -> None:
        self.file.close()
