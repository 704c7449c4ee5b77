"""Nothing but parity.outbound sends an HTTP request: no module of the server or its workers
imports an HTTP client, the standard library's included.

The ``outbound-room`` contract of .importlinter forbids the third-party clients (requests,
urllib3, http); import-linter cannot forbid a part of the standard library's urllib (whose
``parse`` every module may use), so this test refuses ``urllib.request`` and ``http.client``,
and the third-party names too, wherever they are spelled (``from urllib import request``)."""

import ast
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parents[2]
ROOM = REPO_DIR / "parity" / "outbound"
# CI-side files: they run on CI machines with the standard library only, not on the server.
CI_SIDE = REPO_DIR / "parity" / "clients"
CLIENTS = {"urllib.request", "http.client", "requests", "httpx", "urllib3", "aiohttp", "pycurl"}


def _imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module
            for alias in node.names:
                yield node.lineno, f"{node.module}.{alias.name}"


def _client(name: str) -> bool:
    return any(name == c or name.startswith(f"{c}.") for c in CLIENTS)


def _crossings(roots: list[Path], base: Path) -> list[str]:
    found = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            if path.is_relative_to(ROOM) or path.is_relative_to(CI_SIDE):
                continue
            found += [
                f"{path.relative_to(base)}:{line} imports {name}"
                for line, name in _imports(path)
                if _client(name)
            ]
    return found


def test_only_the_outbound_room_imports_an_http_client():
    roots = [REPO_DIR / "parity", REPO_DIR / "ingest"]
    assert _crossings(roots, REPO_DIR) == []


def test_the_check_refuses_each_spelling_of_a_client(tmp_path):
    (tmp_path / "m.py").write_text(
        "import urllib.parse\nimport urllib.request\nfrom urllib import request\n"
        "from http import client\nfrom http import HTTPStatus\nimport requests\n"
    )
    assert _crossings([tmp_path], tmp_path) == [
        "m.py:2 imports urllib.request",
        "m.py:3 imports urllib.request",
        "m.py:4 imports http.client",
        "m.py:6 imports requests",
    ]
