"""tools/import_cycles.py: finds loops in small packages written here, and none in the project."""

import subprocess
import sys
import textwrap
from pathlib import Path

from tools import import_cycles

REPO_DIR = Path(__file__).resolve().parents[2]


def _package(root: Path, name: str, modules: dict[str, str]) -> None:
    """Write package ``name`` under ``root``: module name (``__init__`` too) -> its source."""
    folder = root / name
    folder.mkdir()
    (folder / "__init__.py").write_text(modules.pop("__init__", ""))
    for module, source in modules.items():
        (folder / f"{module}.py").write_text(textwrap.dedent(source))


def _run(root: Path, *packages: str) -> subprocess.CompletedProcess:
    script = REPO_DIR / "tools" / "import_cycles.py"
    return subprocess.run(
        [sys.executable, str(script), *packages],
        cwd=root,
        env={"PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_loop_of_three_modules_fails_naming_each_hop(tmp_path):
    _package(
        tmp_path,
        "loop",
        {
            "a": "from loop import b\n",
            "b": "from loop.c import thing\n",
            # Imports inside functions count: they only hide a loop from Python, not remove it.
            "c": "thing = 1\n\ndef late():\n    from loop import a\n",
            "free": "from loop import a\n",
        },
    )

    result = _run(tmp_path, "loop")

    assert result.returncode == 1
    assert "3 modules import each other: loop.a, loop.b, loop.c" in result.stdout
    assert "loop.c -> loop.a  (line 4)" in result.stdout
    assert "loop.free" not in result.stdout


def test_a_package_init_that_imports_its_submodules_is_not_a_loop(tmp_path):
    _package(
        tmp_path,
        "layered",
        {
            "__init__": "from layered.service import run\n",
            "service": "from layered.models import Row\n\ndef run():\n    return Row\n",
            "models": "class Row:\n    pass\n",
        },
    )
    _package(tmp_path, "app", {"views": "from layered import run\n"})

    result = _run(tmp_path, "layered", "app")

    assert result.returncode == 0, result.stdout
    assert "no import cycles among the 5 modules of layered, app" in result.stdout


def test_a_submodule_that_imports_its_package_back_is_a_loop(tmp_path):
    _package(
        tmp_path,
        "back",
        {"__init__": "from back.service import run\n", "service": "import back\n\nrun = 1\n"},
    )

    result = _run(tmp_path, "back")

    assert result.returncode == 1
    assert "back, back.service" in result.stdout


def test_the_project_has_no_import_cycles():
    graph = import_cycles.import_graph(import_cycles.DEFAULT_PACKAGES)

    assert import_cycles.strongly_connected(graph) == []


def _graph(root: Path, monkeypatch, name: str):
    monkeypatch.syspath_prepend(str(root))
    return import_cycles.grimp.build_graph(name, cache_dir=None)


def test_a_declared_deferred_import_inside_a_function_is_no_loop(tmp_path, monkeypatch):
    _package(
        tmp_path,
        "deferred",
        {
            "tasks": "def sweep():\n    from deferred import lifecycle\n\n    lifecycle.sweep()\n",
            "lifecycle": "from deferred import tasks\n",
        },
    )
    graph = _graph(tmp_path, monkeypatch, "deferred")

    import_cycles.drop_deferred(graph, [("deferred.tasks", "deferred.lifecycle")])

    assert import_cycles.strongly_connected(graph) == []


def test_a_declared_deferred_import_moved_to_the_top_is_a_loop_again(tmp_path, monkeypatch):
    _package(
        tmp_path,
        "eager",
        {
            "tasks": "from eager import lifecycle\n\ndef sweep():\n    lifecycle.sweep()\n",
            "lifecycle": "from eager import tasks\n",
        },
    )
    graph = _graph(tmp_path, monkeypatch, "eager")

    import_cycles.drop_deferred(graph, [("eager.tasks", "eager.lifecycle")])

    assert import_cycles.strongly_connected(graph) == [["eager.lifecycle", "eager.tasks"]]


def test_the_project_declares_only_deferred_imports_that_exist():
    graph = import_cycles.grimp.build_graph("ingest", "parity", cache_dir=None)
    for importer, imported in import_cycles.DEFERRED:
        assert graph.direct_import_exists(importer=importer, imported=imported)
        details = graph.get_import_details(importer=importer, imported=imported)
        assert {d["line_number"] for d in details} <= import_cycles._function_import_lines(importer)
