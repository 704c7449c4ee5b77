"""Fail when any two modules of the project import each other, directly or around a loop.

    .venv/bin/python tools/import_cycles.py [PACKAGE ...]   # default: ingest parity bench

import-linter's ``acyclic_siblings`` contract judges packages (``parity.engine`` against
``parity.selectors``), not modules, so it would flag a package pair whose modules never form a
loop; this script looks at the module graph itself. It builds it with ``grimp`` (what
import-linter uses, so imports inside functions and ``TYPE_CHECKING`` blocks count too), finds
its strongly connected components, prints each with one shortest loop through it, file and line
of every hop, and exits 1 if there is any. A package's ``__init__`` importing its own
submodules is not a loop unless a submodule imports the package back.

One kind of edge is left out, by name: an import the code defers to a function body on purpose
(``DEFERRED``, each with why), while every import of it stays inside a function; moved to the top
of its module, it counts again.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from collections import deque
from collections.abc import Iterable
from pathlib import Path

import grimp

REPO_DIR = Path(__file__).resolve().parent.parent
DEFAULT_PACKAGES = ("ingest", "parity", "bench")


# (importer, imported): why the import waits for a function body. HackSoft's guide defers an
# import into a Celery task's body this way; each one here is a loop Python never runs into.
DEFERRED = {
    ("parity.tasks", "parity.services.lifecycle"): (
        "the quiet-run beat task calls the run lifecycle, which queues parity.tasks.run_completed"
    ),
}


def import_graph(packages: Iterable[str]) -> grimp.ImportGraph:
    sys.path.insert(0, str(REPO_DIR))
    graph = grimp.build_graph(*packages, cache_dir=None)
    drop_deferred(graph, DEFERRED)
    return graph


def drop_deferred(graph: grimp.ImportGraph, deferred: Iterable[tuple[str, str]]) -> None:
    """Remove each deferred edge whose every import sits inside a function body."""
    for importer, imported in deferred:
        if importer not in graph.modules or imported not in graph.modules:
            continue
        if not graph.direct_import_exists(importer=importer, imported=imported):
            continue
        details = graph.get_import_details(importer=importer, imported=imported)
        lines = {detail["line_number"] for detail in details}
        if lines <= _function_import_lines(importer):
            graph.remove_import(importer=importer, imported=imported)


def _function_import_lines(module: str) -> set[int]:
    """Lines of the import statements of ``module`` that are inside a function."""
    spec = importlib.util.find_spec(module)
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    functions = (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
    return {
        node.lineno
        for function in functions
        for node in ast.walk(function)
        if isinstance(node, ast.Import | ast.ImportFrom)
    }


def strongly_connected(graph: grimp.ImportGraph) -> list[list[str]]:
    """Tarjan's algorithm, iterative (the module graph is deep enough to hit the recursion
    limit). Returns only components of two or more modules, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[module])
                if low[module] == index[module]:
                    component = _pop_component(stack, on_stack, module)
                    if len(component) > 1:
                        components.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
            elif child in on_stack:
                low[module] = min(low[module], index[child])
    return sorted(components)


def _pop_component(stack: list[str], on_stack: set[str], root: str) -> list[str]:
    component = []
    while True:
        module = stack.pop()
        on_stack.discard(module)
        component.append(module)
        if module == root:
            return component


def shortest_loop(graph: grimp.ImportGraph, *, start: str, within: set[str]) -> list[str]:
    """Breadth-first from ``start`` back to itself inside one component: start, ..., start."""
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        module = queue.popleft()
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported == start:
                path = [start, module]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return list(reversed(path))
            if imported in within and imported not in came_from:
                came_from[imported] = module
                queue.append(imported)
    raise AssertionError(f"{start} is in a component but on no loop")


def describe_hop(graph: grimp.ImportGraph, *, importer: str, imported: str) -> str:
    details = graph.get_import_details(importer=importer, imported=imported)
    where = ", ".join(f"line {d['line_number']}" for d in details) or "line ?"
    return f"    {importer} -> {imported}  ({where})"


def main(argv: list[str]) -> int:
    packages = argv or list(DEFAULT_PACKAGES)
    graph = import_graph(packages)
    components = strongly_connected(graph)
    for number, component in enumerate(components, start=1):
        loop = shortest_loop(graph, start=component[0], within=set(component))
        print(f"cycle {number}: {len(component)} modules import each other: {', '.join(component)}")
        print("  for example:")
        for importer, imported in zip(loop, loop[1:], strict=False):
            print(describe_hop(graph, importer=importer, imported=imported))
    if components:
        print(f"{len(components)} import cycle(s) in {', '.join(packages)}", file=sys.stderr)
        return 1
    print(f"no import cycles among the {len(graph.modules)} modules of {', '.join(packages)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
