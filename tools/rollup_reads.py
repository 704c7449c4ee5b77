"""Fail when a selector reads raw results: pages read roll-ups (ARCHITECTURE.md, "Reads").

    .venv/bin/python tools/rollup_reads.py [FOLDER]   # default: parity/selectors

The ``rollup-reads`` contract of .importlinter keeps ``parity.selectors`` from importing
``parity.result_reads``; an import cannot say that a module names the ``Result`` model it gets
from ``parity.models`` with every other model. This script can: it reads each module's syntax
tree and refuses any name of a raw-results table (``RAW_NAMES``: the models, and the shared SQL
fragments that read them) and any SQL text naming one of their tables. A read that needs them
belongs in ``parity.result_reads``.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent
# The per-run raw tables (results, per-file seconds) and the fragment of parity.definitions
# that reads results.
RAW_NAMES = {"Result", "FileSeconds", "run_outcomes"}
RAW_TABLES = re.compile(r"\bparity_(result|fileseconds)\b")


def crossings(folder: Path) -> list[str]:
    found = []
    for path in sorted(folder.rglob("*.py")):
        where = path.relative_to(folder)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            name = None
            if isinstance(node, ast.Name):
                name = node.id
            elif isinstance(node, ast.Attribute):
                name = node.attr
            elif isinstance(node, ast.alias):
                name = node.name.rsplit(".", 1)[-1]
            if name in RAW_NAMES:
                found.append(f"{where}:{getattr(node, 'lineno', '?')}: names {name}")
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and RAW_TABLES.search(node.value)
            ):
                found.append(f"{where}:{node.lineno}: SQL names a raw-results table")
    return found


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else REPO_DIR / "parity" / "selectors"
    found = crossings(folder)
    for line in found:
        print(line)
    if found:
        print(
            f"{len(found)} raw-result read(s) in {folder}: selectors read roll-ups; "
            "move the read to parity.result_reads and pass its value in."
        )
        return 1
    print(f"no raw-result reads in {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
