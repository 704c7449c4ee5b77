"""AMD's parity sheet (ROCm/pytorch's weekly CSV): one row per test, with its status on each
architecture, and the skip reason, assignee and comments the team carries week to week::

    test_file,test_class,test_name,mi300_status,mi350_status,skip_reason,issue,assignee,comments
    test_ops.py,TestCommon,test_out_abs_float32,SKIPPED,PASSED,needs hipBLASLt,,alice,retry 7.2

Columns are found by header name, in any order and case:

* ``test_file`` (or ``file``), ``test_class`` (``class``, ``classname``), ``test_name``
  (``name``, ``test``): the test, by the project's identity rules (``**::Class::name`` when no
  file is given);
* ``skip_reason`` (``reason``): the note; ``issue`` (``issue_url``): a URL makes it tracked;
* ``<arch>_status`` or ``status_<arch>``: where the test is skipped (``SKIPPED``, ``SKIP``): on
  some arches only, the entry's condition is ``arch == a`` or ``arch in (a, b)``;
* any other column (``assignee``, ``comments``, ...) is carried as it is.

A row with neither a skip reason nor an issue declares nothing, nor does one that passes on
every arch its status columns name (``PASSED``, ``PASS``): it is reported, not imported, and
kept with the list (``Unread.extra``). Each entry, and each such row, carries its row and the
header, so writing them back gives the same sheet (``\\n`` line ends; rows in the order
read).

Pure: no Django.
"""

import csv
import io
import re

from parity.pure.list_formats.entries import (
    ListEntry,
    ListFormatError,
    ListRead,
    Unread,
    Written,
    ordered,
)
from parity.pure.normalize.rules import DEFAULT_RULES, Rules
from parity.pure.normalize.runner_ids import runner_identity

NAMES = {
    "file": ("test_file", "file"),
    "class": ("test_class", "class", "classname"),
    "name": ("test_name", "name", "test"),
    "reason": ("skip_reason", "reason"),
    "issue": ("issue", "issue_url"),
}
DEFAULT_HEADER = [
    "test_file",
    "test_class",
    "test_name",
    "skip_reason",
    "issue",
    "assignee",
    "comments",
]
_STATUS = re.compile(r"^(?:status_(?P<a>\w+)|(?P<b>\w+)_status)$", re.IGNORECASE)
_SKIPPED = {"skipped", "skip"}
_PASSED = {"passed", "pass"}


def read(text: str, *, rules: Rules = DEFAULT_RULES, backends: tuple[str, ...] = ()) -> ListRead:
    rows = csv.reader(io.StringIO(text.removeprefix("\ufeff")))
    header = next(rows, None)
    if not header:
        raise ListFormatError("An empty file: expected a header row first.")
    columns = _columns(header)
    if "name" not in columns:
        raise ListFormatError("No test_name column in the header.")
    arches = {i: _arch(name) for i, name in enumerate(header) if _arch(name)}
    read = ListRead()
    for number, row in enumerate(rows, 2):
        if not any(cell.strip() for cell in row):
            continue
        where = f"line {number}"
        if len(row) != len(header):
            read.unread.append(Unread(where, f"{len(row)} cells, the header has {len(header)}"))
            continue
        cell = {key: row[i].strip() for key, i in columns.items()}
        if not cell["name"]:
            read.unread.append(Unread(where, "no test_name"))
            continue
        identity = runner_identity(
            {
                "classname": cell.get("class", ""),
                "name": cell["name"],
                "file": cell.get("file") or None,
            },
            rules,
        )
        match = identity.key if identity.file else f"**::{identity.key}"
        extra = {"header": header, "row": row, "order": [number]}
        why = _declares_nothing(cell, row, arches)
        if why:
            read.unread.append(Unread(where, why, {**extra, "match": match}))
            continue
        read.entries.append(
            ListEntry(
                match=match,
                kind="tracked" if cell.get("issue") else "intended",
                backends=backends,
                reason=cell.get("reason", ""),
                issue=cell.get("issue", ""),
                condition=_condition(row, arches),
                extra=extra,
                where=where,
            )
        )
    return read


def _declares_nothing(cell: dict[str, str], row: list[str], arches: dict[int, str]) -> str:
    """Why a row exempts nothing, or "": with no reason and no issue it says nothing yet; a
    test that passes on every arch must not be skipped anywhere."""
    if not cell.get("reason") and not cell.get("issue"):
        return "no skip_reason or issue: it declares nothing"
    if arches and all(row[i].strip().lower() in _PASSED for i in arches):
        return f"passes on every arch ({', '.join(sorted(arches.values()))}): nothing to exempt"
    return ""


def _columns(header: list[str]) -> dict[str, int]:
    lowered = [name.strip().lower() for name in header]
    columns = {}
    for key, names in NAMES.items():
        for name in names:
            if name in lowered:
                columns[key] = lowered.index(name)
                break
    return columns


def _arch(name: str) -> str:
    found = _STATUS.match(name.strip())
    return (found["a"] or found["b"]).lower() if found else ""


def _condition(row: list[str], arches: dict[int, str]) -> str:
    skipped = sorted(arch for i, arch in arches.items() if row[i].strip().lower() in _SKIPPED)
    if not skipped or len(skipped) == len(arches):
        return ""
    if len(skipped) == 1:
        return f"arch == {skipped[0]}"
    return f"arch in ({', '.join(skipped)})"


def write(entries: list[ListEntry]) -> Written:
    entries = ordered(entries)
    header = next((list(e.extra["header"]) for e in entries if "header" in e.extra), None)
    header = header or list(DEFAULT_HEADER)
    columns = _columns(header)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    skipped: list[Unread] = []
    for entry in entries:
        row = _row(entry, header, columns)
        if row is None:
            skipped.append(Unread(entry.match, "not one test (a glob or a file)"))
        else:
            writer.writerow(row)
    return Written(out.getvalue(), skipped)


def _row(entry: ListEntry, header: list[str], columns: dict[str, int]) -> list[str] | None:
    carried = entry.extra.get("row")
    if carried is not None and list(entry.extra.get("header", [])) == header:
        row = list(carried)
    else:
        spelled = _test_parts(entry.match)
        if spelled is None:
            return None
        row = [""] * len(header)
        for key, value in zip(("file", "class", "name"), spelled, strict=True):
            if key in columns:
                row[columns[key]] = value
    if not entry.kind:
        return row  # a row the list keeps though it declares nothing: as it was
    for key, value in (("reason", entry.reason), ("issue", entry.issue)):
        if key in columns:
            row[columns[key]] = value  # parity's word wins: an edit there flows out
    return row


def _test_parts(match: str) -> tuple[str, str, str] | None:
    if "*" in match.removeprefix("**::") or "?" in match:
        return None
    parts = match.split("::")
    file = "" if parts[0] == "**" else parts[0]
    if len(parts) == 3:
        return file, parts[1], parts[2]
    if len(parts) == 2 and file:
        return file, "", parts[1]
    return None
