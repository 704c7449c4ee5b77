"""parity.pure imports only the standard library, its parsers and itself.

The ``pure`` contract of .importlinter forbids what is known to be impure (Django, the database
driver, the rest of parity, ingest); this test holds the other half: any import of a package
that is not the standard library's (or yaml, the one parser the rule files are read with) is
refused too, so a new dependency cannot slip in under a name the contract does not list."""

import ast
import sys
from pathlib import Path

PURE = Path(__file__).resolve().parents[2] / "parity" / "pure"
ALLOWED = {"yaml", "parity"}  # "parity": parity.pure itself, checked below


def _imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module


def _crossings(root: Path) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        for line, name in _imports(path):
            top = name.split(".")[0]
            inside = name == "parity.pure" or name.startswith("parity.pure.")
            if (top == "parity" and not inside) or top not in sys.stdlib_module_names | ALLOWED:
                found.append(f"{path.relative_to(root)}:{line} imports {name}")
    return found


def test_parity_pure_imports_the_standard_library_and_itself_only():
    assert _crossings(PURE) == []


def test_the_check_refuses_a_third_party_package_and_the_rest_of_parity(tmp_path):
    (tmp_path / "m.py").write_text(
        "import json\nimport requests\n"
        "from parity.models import Run\nfrom parity.pure import globs\n"
    )
    assert _crossings(tmp_path) == ["m.py:2 imports requests", "m.py:3 imports parity.models"]
