"""The stack is total: every module of parity and ingest is in a layer of .importlinter's
``layers`` contract or is infrastructure (``tools/stack_total.py``, run by ``make lint``). A
module in neither is invisible to the layers contract: it may import anything."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tools.stack_total import unplaced

REPO_DIR = Path(__file__).resolve().parents[2]


def test_every_module_has_its_place():
    assert unplaced() == [], "\n".join(unplaced())


def _python_files_only(folder: str, names: list[str]) -> list[str]:
    return [
        name
        for name in names
        if name == "__pycache__"
        or not (name.endswith(".py") or os.path.isdir(os.path.join(folder, name)))
    ]


def _stack_total(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, REPO_DIR / "tools" / "stack_total.py", root],
        cwd=root,
        env={"PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_new_module_in_no_layer_is_named_with_where_it_fits(tmp_path):
    for package in ("ingest", "parity"):
        shutil.copytree(REPO_DIR / package, tmp_path / package, ignore=_python_files_only)
    shutil.copy(REPO_DIR / ".importlinter", tmp_path / ".importlinter")
    assert _stack_total(tmp_path).returncode == 0

    # A service a view calls, created without a line in .importlinter.
    (tmp_path / "parity" / "services" / "brand_new_feature.py").write_text(
        "from parity.models import WebhookEndpoint\n"
    )
    with (tmp_path / "parity" / "api" / "views.py").open("a") as views:
        views.write("\nfrom parity.services import brand_new_feature  # a new service\n")
    run = _stack_total(tmp_path)

    assert run.returncode == 1, run.stdout + run.stderr
    assert run.stdout.splitlines()[:3] == [
        "parity.services.brand_new_feature is in no layer of .importlinter's `layers` contract "
        "and not infrastructure.",
        "  it imports: parity.models",
        "  imported by: parity.api.views",
    ]
    assert (
        "add `parity.services.brand_new_feature` (or its package) to a layer below layer 5 "
        "(ingest.api : parity.api) and above layer 16 (parity.models) in `layers`"
    ) in run.stdout
    assert "`source_modules` of the `infrastructure` contract" in run.stdout
    assert run.stdout.endswith("1 module(s) in no layer and not infrastructure\n")
