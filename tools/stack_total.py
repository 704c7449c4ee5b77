"""Fail when a module of parity or ingest is in no layer of the stack and is not infrastructure.

    .venv/bin/python tools/stack_total.py [ROOT]   # default: this repository

The ``layers`` contract of .importlinter judges only the modules its layers name: a module in
none of them may import anything and be imported by anything, and the linter stays silent. This
script makes the stack total. Every module ``grimp`` finds under ``parity`` and ``ingest`` (what
import-linter reads) must be covered by a name of a layer of ``layers`` or by a source module
of the ``infrastructure`` contract (which keeps infrastructure from importing any layer). The
root packages and a package whose ``__init__`` imports nothing of the project (a folder of
modules placed one by one, like ``parity.services``) need no place of their own.

For each module that has none it prints what it imports and what imports it, and the layers
between which it fits, so the fix is one line of .importlinter.
"""

from __future__ import annotations

import configparser
import sys
from dataclasses import dataclass
from pathlib import Path

import grimp

REPO_DIR = Path(__file__).resolve().parent.parent
PACKAGES = ("parity", "ingest")
LAYERS = "importlinter:contract:layers"
INFRASTRUCTURE = "importlinter:contract:infrastructure"


@dataclass(frozen=True)
class Placement:
    layers: list[list[str]]  # top to bottom, each the names of one layer
    infrastructure: list[str]

    def layer_of(self, module: str) -> int | None:
        for index, names in enumerate(self.layers):
            if any(_covers(name, module) for name in names):
                return index
        return None

    def is_infrastructure(self, module: str) -> bool:
        return any(_covers(name, module) for name in self.infrastructure)


def _covers(name: str, module: str) -> bool:
    return module == name or module.startswith(name + ".")


def placement_read(config_path: Path) -> Placement:
    config = configparser.ConfigParser()
    config.read(config_path, encoding="utf-8")
    layers = [
        [name.strip() for name in line.replace("|", ":").split(":") if name.strip()]
        for line in config[LAYERS]["layers"].strip().splitlines()
    ]
    infrastructure = config[INFRASTRUCTURE]["source_modules"].split()
    return Placement(layers=layers, infrastructure=infrastructure)


def unplaced(root: Path = REPO_DIR) -> list[str]:
    """One message per module of ``root``'s parity and ingest that has no place in the stack."""
    placement = placement_read(root / ".importlinter")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    messages = []
    for module in sorted(graph.modules):
        if module in PACKAGES or placement.layer_of(module) is not None:
            continue
        if placement.is_infrastructure(module):
            continue
        imports = sorted(m for m in graph.find_modules_directly_imported_by(module) if _ours(m))
        importers = sorted(graph.find_modules_that_directly_import(module))
        if not imports and graph.find_children(module) and not importers:
            continue  # a folder: its modules are placed one by one
        messages.append(_message(placement, module, imports, importers))
    return messages


def _ours(module: str) -> bool:
    return module.split(".")[0] in PACKAGES


def _message(placement: Placement, module: str, imports: list[str], importers: list[str]) -> str:
    below = [placement.layer_of(m) for m in imports]
    above = [placement.layer_of(m) for m in importers]
    lowest_importer = max((i for i in above if i is not None), default=None)
    highest_import = min((i for i in below if i is not None), default=None)
    lines = [
        f"{module} is in no layer of .importlinter's `layers` contract and not infrastructure.",
        f"  it imports: {', '.join(imports) or 'nothing of parity or ingest'}",
        f"  imported by: {', '.join(importers) or 'nothing yet'}",
    ]
    if lowest_importer is None and highest_import is None:
        where = "any layer"
    elif highest_import is None:
        where = f"a layer below {_layer(placement, lowest_importer)}"
    elif lowest_importer is None:
        where = f"a layer above {_layer(placement, highest_import)}"
    elif lowest_importer < highest_import:
        where = (
            f"a layer below {_layer(placement, lowest_importer)}"
            f" and above {_layer(placement, highest_import)}"
        )
    else:
        where = (
            f"no layer: it imports {_layer(placement, highest_import)} and "
            f"{_layer(placement, lowest_importer)} imports it; move what the lower one needs down"
        )
    lines.append(
        f"  place it: add `{module}` (or its package) to {where} in `layers` "
        '(ARCHITECTURE.md, "Layers"); or, if it imports no layer and every layer may use it, '
        "to `source_modules` of the `infrastructure` contract. Name it in ARCHITECTURE.md's "
        "code map too."
    )
    return "\n".join(lines)


def _layer(placement: Placement, index: int) -> str:
    return f"layer {index + 1} ({' : '.join(placement.layers[index])})"


def main(argv: list[str]) -> int:
    root = Path(argv[0]).resolve() if argv else REPO_DIR
    messages = unplaced(root)
    for message in messages:
        print(message)
    if messages:
        print(f"{len(messages)} module(s) in no layer and not infrastructure")
        return 1
    print(f"every module of {', '.join(PACKAGES)} has its place in the stack")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
