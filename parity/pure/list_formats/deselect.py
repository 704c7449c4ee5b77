"""pytest ``--deselect`` lists, and plain lists of files and tests with reasons (Intel's "Not
Applicable" list): one pytest node ID a line, bare or after ``--deselect`` (or
``--deselect=``), with an optional reason after `` # ``::

    --deselect test/test_ops.py::TestCommonCUDA::test_out_cuda  # needs a second device
    test/test_sparse.py  # no sparse kernels on this backend

pytest deselects every test whose node ID starts with the one given, so a test's node ID
becomes its key by the project's identity rules with a ``*`` after it (its parameters and
variants), a ``file::Class`` every test of the class, and a file every test of the file.
Blank lines and whole-line comments say nothing and are not kept. A line's reason is the
entry's note (default: one naming the list); the entry is ``kind`` (intended, or
not_applicable for a "not applicable" list).

Writing gives one node ID a line, as read (``--deselect`` or bare), in the order read.

Pure: no Django.
"""

import re

from parity.pure.list_formats.entries import (
    ListEntry,
    ListRead,
    Unread,
    Written,
    issue_in,
    kind_checked,
    ordered,
)
from parity.pure.normalize.rules import DEFAULT_RULES, Rules
from parity.pure.normalize.runner_ids import RunnerIdError, runner_identity

_FLAG = re.compile(r"^--deselect(?:=|\s+)")
_CLASS = re.compile(r"^[A-Z]\w*$")


def read(
    text: str,
    *,
    rules: Rules = DEFAULT_RULES,
    source_name: str = "",
    kind: str = "intended",
    condition: str = "",
    backends: tuple[str, ...] = (),
) -> ListRead:
    kind_checked(kind)
    note = f"Listed in {source_name}" if source_name else "Listed in a deselect list"
    read = ListRead()
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        node, _, comment = stripped.partition(" #")
        node, comment = node.strip(), comment.strip()
        flag = _FLAG.match(node)
        if flag:
            node = node[flag.end() :].strip()
        where = f"line {number}"
        match = _pattern(node, rules)
        if isinstance(match, Unread):
            read.unread.append(Unread(where, match.why))
            continue
        extra: dict = {"nodeid": node, "order": [number]}
        if flag:
            extra["flag"] = True
        if comment:
            extra["comment"] = True
        issue = issue_in(comment)
        read.entries.append(
            ListEntry(
                match=match,
                kind="tracked" if issue and kind != "not_applicable" else kind,
                backends=backends,
                reason=comment or note,
                issue=issue,
                condition=condition,
                extra=extra,
                where=where,
            )
        )
    return read


def _pattern(node: str, rules: Rules) -> str | Unread:
    if not node or " " in node.partition("[")[0]:
        return Unread("", f"'{node}' is not a pytest node ID")
    if "*" in node or "?" in node:
        return Unread("", "'*' and '?' would read as wildcards in a parity pattern")
    parts = node.split("::")
    if len(parts) == 1:
        return node  # a file: every test in it
    if len(parts) == 2 and _CLASS.match(parts[1]):
        return f"{node}::*"  # a class
    try:
        return runner_identity(node, rules).key + "*"
    except RunnerIdError as exc:
        return Unread("", str(exc))


def write(entries: list[ListEntry]) -> Written:
    lines: list[str] = []
    skipped: list[Unread] = []
    for entry in ordered(entries):
        node = entry.extra.get("nodeid") or _node(entry.match)
        if node is None:
            skipped.append(Unread(entry.match, "no node ID names the same tests (a glob)"))
            continue
        line = f"--deselect {node}" if entry.extra.get("flag") else node
        comment = entry.reason if entry.extra.get("comment", "nodeid" not in entry.extra) else ""
        if entry.issue and entry.issue not in comment:
            comment = f"{comment} {entry.issue}".strip()
        if comment:
            line += f"  # {comment}"
        lines.append(line)
    return Written("".join(f"{line}\n" for line in lines), skipped)


def _node(match: str) -> str | None:
    """The node ID of a pattern pytest's prefix rule reproduces: a file, a test ID (exact, or
    ending in one ``*``)."""
    body = match.removesuffix("*")
    if body.startswith("**") or "*" in body or "?" in body:
        return None
    return body.removesuffix("::")
