"""PyTorch's disabled-tests JSON (``disabled-tests-condensed.json``, written by test-infra from
the open DISABLED issues)::

    {"test_add_cuda (__main__.TestBinaryUfuncsCUDA)": [
        "98765", "https://github.com/pytorch/pytorch/issues/98765", ["rocm", "linux"]]}

Each key is a unittest name and its class; each value the issue's number and URL and the
platforms it is disabled on (none: every platform). An entry is a tracked exemption of that
test, by the project's identity rules, in whatever file defines the class (``**::Class::name``),
on the backends the platforms name. The platforms, the issue number and the key's spelling are
carried, so writing the entry back gives the same file: ``json.dumps(..., sort_keys=True,
indent=2)``, as test-infra writes it.

Pure: no Django.
"""

import json
import re

from parity.pure.list_formats.entries import (
    ListEntry,
    ListFormatError,
    ListRead,
    Unread,
    Written,
    kind_checked,
)
from parity.pure.normalize.rules import DEFAULT_RULES, Rules
from parity.pure.normalize.runner_ids import runner_identity

_KEY = re.compile(r"^(?P<name>[^\s()]+) \((?P<classname>[^\s()]+)\)$")
_WILDCARD = re.compile(r"[*?]")
_ISSUE_NUMBER = re.compile(r"/(\d+)/?$")


def read(text: str, *, rules: Rules = DEFAULT_RULES, kind: str = "tracked") -> ListRead:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ListFormatError(f"Not JSON: {exc}.") from None
    if not isinstance(data, dict):
        raise ListFormatError("Expected an object of 'test_name (module.TestClass)' keys.")
    kind_checked(kind)
    read = ListRead()
    for key, value in data.items():
        entry = _entry(key, value, rules, kind)
        if isinstance(entry, Unread):
            read.unread.append(entry)
        else:
            read.entries.append(entry)
    return read


def _entry(key: str, value: object, rules: Rules, kind: str) -> ListEntry | Unread:
    where = f"'{key}'"
    spelled = _KEY.match(key)
    if spelled is None:
        return Unread(where, "the key is not 'test_name (module.TestClass)'")
    if _WILDCARD.search(key):
        return Unread(where, "'*' and '?' would read as wildcards in a parity pattern")
    if not (isinstance(value, list) and len(value) == 3 and isinstance(value[2], list)):
        return Unread(where, "the value is not [issue number, issue URL, [platforms]]")
    number, url, platforms = value
    if not isinstance(url, str) or not all(isinstance(p, str) for p in platforms):
        return Unread(where, "the issue URL and the platforms must be text")
    identity = runner_identity({"classname": spelled["classname"], "name": spelled["name"]}, rules)
    match = identity.key if identity.file else f"**::{identity.key}"
    return ListEntry(
        match=match,
        kind=kind,
        backends=tuple(platforms),
        # A tracked entry's issue says why; read as another kind, it needs words of its own.
        reason="" if kind == "tracked" else f"Disabled in PyTorch's CI by {url}",
        issue=url,
        extra={"name": key, "issue_number": number, "platforms": platforms},
        where=where,
    )


def write(entries: list[ListEntry]) -> Written:
    data: dict[str, list] = {}
    skipped: list[Unread] = []
    for entry in entries:
        name = entry.extra.get("name") or _key(entry.match)
        if name is None:
            skipped.append(Unread(entry.match, "not one test of one class (a glob or a file)"))
            continue
        if not entry.issue:
            skipped.append(Unread(entry.match, "cites no issue: the format needs one"))
            continue
        if name in data:
            skipped.append(Unread(entry.match, f"'{name}' is written once already"))
            continue
        number = entry.extra.get("issue_number")
        if number is None:
            found = _ISSUE_NUMBER.search(entry.issue)
            number = found.group(1) if found else ""
        platforms = entry.extra.get("platforms")
        data[name] = [number, entry.issue, list(platforms or entry.backends)]
    return Written(json.dumps(data, sort_keys=True, indent=2), skipped)


def _key(match: str) -> str | None:
    """``test (__main__.Class)`` for a pattern naming one class's test, in any file or one."""
    if _WILDCARD.search(match.removeprefix("**::")):
        return None
    parts = match.removeprefix("**::").split("::")
    if len(parts) == 3:
        parts = parts[1:]
    if len(parts) != 2 or not all(parts):
        return None
    return f"{parts[1]} (__main__.{parts[0]})"
