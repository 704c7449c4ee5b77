"""What every list format reads into and writes from: entries, and what a file held that could
not become one.

An entry is one declaration as the list states it: a pattern over parity's test IDs
(``parity.pure.globs``), its kind, the backends as the list names them (a service resolves
them to the project's), a reason, an issue, a condition over run attributes (kept as text,
``parity.pure.attributes`` reads it), and ``extra``: what the list carried that parity does not
model, plus how the list spelled the entry, so writing it back gives the list's own text. An
entry of no ``kind`` is a row a list keeps though it declares nothing (``Unread.extra``): a
writer gives it back as it was.

Pure: no Django.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field

NOT_APPLICABLE = "not_applicable"
KINDS = ("tracked", "intended", "quarantine", NOT_APPLICABLE)


class ListFormatError(ValueError):
    """A file that cannot be read as its format at all; the message says where and why."""


@dataclass(frozen=True)
class ListEntry:
    match: str
    kind: str
    backends: tuple[str, ...] = ()  # as the list names them; none: every backend
    reason: str = ""
    issue: str = ""  # a URL
    condition: str = ""
    extra: Mapping = field(default_factory=dict)  # JSON-able
    where: str = ""  # where in the file, for reports ("line 4", a key)


@dataclass(frozen=True)
class Unread:
    """Part of a file that became no entry (on import), or an entry a format cannot spell (on
    export): where it is and why."""

    where: str
    why: str
    # A row the list keeps though it declares nothing (an AMD sheet's row with no reason yet,
    # or one that passes everywhere), as an entry's ``extra``: an export writes it back.
    extra: Mapping = field(default_factory=dict, compare=False)


@dataclass
class ListRead:
    entries: list[ListEntry] = field(default_factory=list)
    unread: list[Unread] = field(default_factory=list)


@dataclass
class Written:
    text: str
    skipped: list[Unread] = field(default_factory=list)


def issue_in(text: str) -> str:
    """The first http(s) URL in ``text`` (a comment citing its issue), or ""."""
    for word in text.split():
        if word.startswith(("https://", "http://")):
            return word.rstrip(".,;)")
    return ""


def ordered(entries: list[ListEntry]) -> list[ListEntry]:
    """Entries in the order their list had them (``extra["order"]``), then the others by
    pattern: a project's triages come back from the database in no particular order."""
    return sorted(
        entries,
        key=lambda e: (
            "order" not in e.extra,
            tuple(e.extra.get("order") or ()),
            e.match,
        ),
    )


def kind_checked(kind: str) -> str:
    if kind not in KINDS:
        raise ListFormatError(f"Unknown kind '{kind}': use one of {', '.join(KINDS)}.")
    return kind
