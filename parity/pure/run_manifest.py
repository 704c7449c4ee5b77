"""The run manifest: what a CI job was told to run, one test file an entry, and what happened
to each (``parity_ci.py run`` writes it; a plain upload may send only the files expected).

JSON, sent as the upload's ``run_manifest`` field::

    {"files": [{"file": "test/test_ops.py", "started": true, "exit_code": null,
                "signal": "SIGSEGV", "timed_out": false, "duration": 12.5,
                "report": false, "tests": null}, ...]}

Only ``file`` is required; ``started`` defaults to true. The pytest plugin and the unittest
runner write an entry when a file starts and another when it ends; a crash leaves only the
first, which reads as crashed. ``file_state`` says what one entry
means for the tests of its file that have no result: the gap state they get
(``parity.models.GapState``), or ``ran`` when the file ran normally (its absent tests stay
``missing``: the backend has no such test).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_FILES = 100_000
MAX_FILE_CHARS = 500  # parity.models.results.MAX_FILE_CHARS
MAX_SIGNAL_CHARS = 20

RAN = "ran"
CRASHED = "crashed"
TIMED_OUT = "timed_out"
EMPTY = "empty"
NOT_RUN = "not_run"
# Set by the server, never read from an entry: the file reported far fewer tests than in the
# backend's last complete run (``parity.definitions.file_truncated``).
TRUNCATED = "truncated"

_FIELDS = ("file", "started", "exit_code", "signal", "timed_out", "duration", "report", "tests")


class ManifestError(ValueError):
    """A manifest that is not of the documented shape; the text says where and why."""


@dataclass(frozen=True)
class FileRun:
    file: str
    started: bool = True
    exit_code: int | None = None
    signal: str = ""
    timed_out: bool = False
    duration: float | None = None
    report: bool = False
    tests: int | None = None


def file_state(entry: FileRun) -> str:
    """Why the file's tests without a result have none. A non-zero exit with a report written
    is a run that finished (pytest exits 1 when a test fails), so it is no crash; a file that
    started and never said how it ended (a runner's entry without its end) is one."""
    if not entry.started:
        return NOT_RUN
    if entry.timed_out:
        return TIMED_OUT
    if entry.signal or (entry.exit_code != 0 and not entry.report):
        return CRASHED
    if not entry.tests:
        return EMPTY
    return RAN


def exit_status(entry: FileRun) -> str:
    """How the file's process ended, for a person: "SIGSEGV", "exit 124", "timed out",
    "did not finish"..."""
    if not entry.started:
        return "not started"
    if entry.timed_out:
        return "timed out"
    if entry.signal:
        return entry.signal
    if entry.exit_code is None:  # a runner's entry whose end never came
        return "" if entry.report else "did not finish"
    return f"exit {entry.exit_code}"


def manifest_parse(data: object) -> list[FileRun]:
    """The entries of a decoded manifest, each file once; ``ManifestError`` otherwise."""
    if not isinstance(data, dict) or not isinstance(data.get("files"), list):
        raise ManifestError('a run manifest is an object with a "files" list')
    unknown = set(data) - {"files", "version"}
    if unknown:
        raise ManifestError(f"unknown run manifest field(s): {', '.join(sorted(unknown))}")
    files = data["files"]
    if len(files) > MAX_FILES:
        raise ManifestError(f"a run manifest lists at most {MAX_FILES:,} files")
    entries = [_entry(item, index) for index, item in enumerate(files)]
    seen: set[str] = set()
    for entry in entries:
        if entry.file in seen:
            raise ManifestError(f"files: {entry.file!r} is listed twice")
        seen.add(entry.file)
    return entries


def _entry(item: object, index: int) -> FileRun:
    where = f"files[{index}]"
    if not isinstance(item, dict):
        raise ManifestError(f"{where} must be an object")
    unknown = set(item) - set(_FIELDS)
    if unknown:
        raise ManifestError(
            f"{where}: unknown field(s) {', '.join(sorted(unknown))} (known: {', '.join(_FIELDS)})"
        )
    file = item.get("file")
    if not isinstance(file, str) or not file.strip() or len(file) > MAX_FILE_CHARS:
        raise ManifestError(f"{where}.file must be a path of 1 to {MAX_FILE_CHARS} characters")
    signal = item.get("signal") or ""
    if not isinstance(signal, str) or len(signal) > MAX_SIGNAL_CHARS:
        raise ManifestError(f"{where}.signal must be a signal's name, e.g. SIGSEGV")
    return FileRun(
        file=file.strip(),
        started=_bool(item, "started", where, default=True),
        exit_code=_int(item, "exit_code", where, low=-(2**31), high=2**31 - 1),
        signal=signal,
        timed_out=_bool(item, "timed_out", where, default=False),
        duration=_seconds(item, where),
        report=_bool(item, "report", where, default=False),
        tests=_int(item, "tests", where, low=0, high=2**31 - 1),
    )


def _bool(item: dict, name: str, where: str, *, default: bool) -> bool:
    value = item.get(name, default)
    if not isinstance(value, bool):
        raise ManifestError(f"{where}.{name} must be true or false")
    return value


def _int(item: dict, name: str, where: str, *, low: int, high: int) -> int | None:
    value = item.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ManifestError(f"{where}.{name} must be an integer from {low} to {high} or null")
    return value


def _seconds(item: dict, where: str) -> float | None:
    value = item.get("duration")
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise ManifestError(f"{where}.duration must be a number of seconds (>= 0) or null")
    return float(value)
