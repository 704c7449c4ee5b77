"""Lists teams keep outside parity, read into entries and written back in their own format:
one module per format (see each one's docstring for its shape and what maps to what).

``list_read`` reads a file of one format with the options that format takes; ``FORMATS``
says, per format, its writer, the content type and file name an export is served with, and
the source its imports are recorded under.

Pure: no Django.
"""

import csv
from collections.abc import Callable
from dataclasses import dataclass

from parity.pure.list_formats import (
    amd_csv,
    deselect,
    disabled_json,
    parity_yaml,
    set_test_configs,
    skip_dict,
)
from parity.pure.list_formats.entries import (
    KINDS,
    NOT_APPLICABLE,
    ListEntry,
    ListFormatError,
    ListRead,
    Unread,
    Written,
)
from parity.pure.normalize.rules import DEFAULT_RULES, Rules
from parity.pure.nul import nul_message

__all__ = [
    "FORMATS",
    "KINDS",
    "NOT_APPLICABLE",
    "ListEntry",
    "ListFormatError",
    "ListRead",
    "ReadOptions",
    "Unread",
    "Written",
    "list_read",
    "list_source",
]


@dataclass(frozen=True)
class ListFormat:
    write: Callable[[list[ListEntry]], Written]
    content_type: str
    filename: str
    source: str  # the source of its imports; ":{file}" is the file's name, for per-file lists


FORMATS: dict[str, ListFormat] = {
    "yaml": ListFormat(parity_yaml.write, "application/yaml", "exemptions.yaml", ""),
    "disabled-json": ListFormat(
        disabled_json.write,
        "application/json",
        "disabled-tests-condensed.json",
        "import:disabled-json",
    ),
    "set-test-configs": ListFormat(
        set_test_configs.write, "text/x-python", "test_configs.py", "set_test_configs:{file}"
    ),
    "skip-dict": ListFormat(
        skip_dict.write, "text/x-python", "skip_list.py", "import:skip-dict:{file}"
    ),
    "amd-csv": ListFormat(amd_csv.write, "text/csv", "parity.csv", "import:amd-csv"),
    "deselect": ListFormat(deselect.write, "text/plain", "deselect.txt", "import:deselect:{file}"),
    "na-list": ListFormat(
        deselect.write, "text/plain", "not_applicable.txt", "import:na-list:{file}"
    ),
}


@dataclass(frozen=True)
class ReadOptions:
    """What a read may need beyond the text; each format reads the options it has a use for."""

    rules: Rules = DEFAULT_RULES
    source_name: str = ""  # the file's name, for notes ("Skipped in skip_list_arc.py")
    kind: str = ""  # "": the format's own default
    condition: str = ""  # skip-dict, deselect, na-list: every entry's
    backends: tuple[str, ...] = ()  # every entry's, where the file names none
    prefix: str = ""  # skip-dict: put before its file names


def list_read(format: str, text: str, options: ReadOptions = ReadOptions()) -> ListRead:
    """The entries of ``text``, a file of ``format``; ``ListFormatError`` if it is not one."""
    try:
        read = _read(format, text, options)
    except ListFormatError:
        raise
    # Whatever else a hostile file makes a parser raise (a NUL byte, nesting past the
    # interpreter's limit, a name too long for a test ID) is the file's fault, not a crash.
    except (ValueError, RecursionError, MemoryError, csv.Error) as exc:
        raise ListFormatError(f"Cannot read it as {format}: {exc}") from None
    for entry in read.entries:
        fields = {
            "match": entry.match,
            "backends": entry.backends,
            "reason": entry.reason,
            "issue": entry.issue,
            "condition": entry.condition,
            "extra": entry.extra,
        }
        problem = nul_message(fields)
        if problem is not None:
            # The whole file, not the entry: an entry left out would be pruned as gone.
            raise ListFormatError(f"{entry.where or 'An entry'}: the entry {problem}")
    return read


def _read(format: str, text: str, options: ReadOptions) -> ListRead:
    o = options
    if format == "disabled-json":
        return disabled_json.read(text, rules=o.rules, kind=o.kind or "tracked")
    if format == "set-test-configs":
        return set_test_configs.read(text, source_name=o.source_name, backends=o.backends)
    if format == "skip-dict":
        return skip_dict.read(
            text,
            source_name=o.source_name,
            prefix=o.prefix,
            condition=o.condition,
            backends=o.backends,
            kind=o.kind or "intended",
        )
    if format == "amd-csv":
        return amd_csv.read(text, rules=o.rules, backends=o.backends)
    if format in ("deselect", "na-list"):
        default = NOT_APPLICABLE if format == "na-list" else "intended"
        return deselect.read(
            text,
            rules=o.rules,
            source_name=o.source_name,
            kind=o.kind or default,
            condition=o.condition,
            backends=o.backends,
        )
    raise ListFormatError(f"Unknown format '{format}': use one of {', '.join(FORMATS)}.")


def list_source(format: str, name: str = "") -> str:
    """The source a list of ``format`` named ``name`` (its file's path) is imported under:
    per file for the formats a project keeps several of, one per format otherwise."""
    return FORMATS[format].source.format(file=name or "-")
