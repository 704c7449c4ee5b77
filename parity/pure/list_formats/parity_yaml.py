"""Parity's own list file (``parity_file`` reads it), written from entries: what
``import_exemptions --format yaml`` reads back.

Pure: no Django.
"""

import yaml

from parity.pure.list_formats.entries import KINDS, ListEntry, Unread, Written, ordered


def write(entries: list[ListEntry]) -> Written:
    items, skipped = [], []
    for entry in ordered(entries):
        if entry.kind not in KINDS:
            skipped.append(Unread(entry.match, f"parity's file has no kind '{entry.kind}'"))
            continue
        item: dict = {"match": entry.match, "kind": entry.kind}
        if entry.backends:
            item["backends"] = list(entry.backends)
        for key, value in (("reason", entry.reason), ("issue", entry.issue)):
            if value:
                item[key] = value
        items.append(item)
    return Written(
        yaml.safe_dump(items, sort_keys=False, allow_unicode=True) if items else "[]\n", skipped
    )
