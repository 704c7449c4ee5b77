"""What the writer takes: one row per case, as the normalizer made it."""

from typing import NamedTuple


class ResultRow(NamedTuple):
    """One result of an upload, as the normalizer made it."""

    key: str
    file: str
    class_name: str
    name: str
    outcome: int
    duration: float | None
    message: str
    reason_kind: str | None = None
    reason_text: str | None = None
    reason_fp: str | None = None
    suite: str = ""  # its suite label (parity.pure.junit.suites)
    document: int = 0  # its XML document's number in the upload: suites differ within one
