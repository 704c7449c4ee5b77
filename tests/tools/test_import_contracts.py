"""The import walls of .importlinter hold: each contract breaks when a copy of the code crosses it.

Each test copies ``ingest/`` and ``parity/`` (their Python files) to a temporary folder, adds one
forbidden import to one module, and runs ``lint-imports`` with the project's .importlinter on
the copy: the contract must break and name that import. The real tree's verdict is
``make lint``'s.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_DIR = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"

CROSSINGS = [
    # contract, module that crosses, the import added, what the report must say
    (
        "pure",
        "parity/pure/normalize/issues.py",
        "from django.utils import timezone",
        "parity.pure.normalize.issues -> django.utils",
    ),
    (
        "pure",
        "parity/pure/junit/cases.py",
        "from parity.models import Run",
        "parity.pure.junit.cases -> parity.models",
    ),
    (
        "pure",
        "parity/pure/globs.py",
        "from parity.engine import gaps",
        "parity.pure.globs -> parity.engine.gaps",
    ),
    (
        "pure",
        "parity/pure/archives.py",
        "import rest_framework",
        "parity.pure.archives -> rest_framework",
    ),
    (
        "edges-call-services",
        "parity/api/views.py",
        "from ingest.writer import results_write",
        "parity.api.views -> ingest.writer",
    ),
    (
        "edges-call-services",
        "parity/dashboard/views.py",
        "from parity.engine.recompute import parity_recompute",
        "parity.dashboard.views -> parity.engine.recompute",
    ),
    (
        "edges-call-services",
        "ingest/api/views.py",
        "from ingest import pipeline",
        "ingest.api.views -> ingest.pipeline",
    ),
    (
        "engine-no-http",
        "parity/engine/gaps.py",
        "from django.http import HttpResponse",
        "parity.engine.gaps -> django.http",
    ),
    (
        "engine-no-http",
        "parity/engine/rollups.py",
        "from parity.api import views",
        "parity.engine.rollups -> parity.api.views",
    ),
    (
        "parity-under-ingest",
        "parity/engine/gaps.py",
        "from ingest.services import upload_create",
        "parity.engine.gaps -> ingest.services",
    ),
    (
        "ingest-not-pages",
        "ingest/recovery.py",
        "from parity.digest.render import digest_render",
        "ingest.recovery -> parity.digest.render",
    ),
    (
        "selectors-read",
        "parity/result_reads/verdict.py",
        "from parity.engine.current import current_run_pick",
        "parity.result_reads.verdict -> parity.engine.current",
    ),
    (
        "verdict-parts",
        "parity/result_reads/run_health.py",
        "from parity.result_reads.verdict import Verdict",
        "parity.result_reads.run_health -> parity.result_reads.verdict",
    ),
    (
        "verdict-parts",
        "parity/result_reads/exemptions_applied.py",
        "from parity.result_reads.run_health import Rerun",
        "parity.result_reads.exemptions_applied -> parity.result_reads.run_health",
    ),
    (
        "rollup-reads",
        "parity/selectors/heatmap.py",
        "from parity.result_reads import aligned_view",
        "parity.selectors.heatmap -> parity.result_reads",
    ),
    (
        "selectors-read",
        "parity/selectors/heatmap.py",
        "from parity.dashboard import presenters",
        "parity.selectors.heatmap -> parity.dashboard.presenters",
    ),
    (
        "web-packages-apart",
        "parity/digest/views.py",
        "from parity.dashboard import presenters",
        "parity.digest.views -> parity.dashboard.presenters",
    ),
    (
        "web-packages-apart",
        "ingest/api/views.py",
        "from parity.api import serializers",
        "ingest.api.views -> parity.api.serializers",
    ),
    (
        "layers",
        "parity/models/runs.py",
        "from parity.selectors import gaps",
        "parity.models.runs -> parity.selectors.gaps",
    ),
    (
        "layers",
        "parity/engine/gaps.py",
        "from parity.services import triage",
        "parity.engine.gaps -> parity.services.triage",
    ),
    (
        "layers",
        "ingest/writer/rows.py",
        "from parity.selectors import runs",
        "ingest.writer.rows -> parity.selectors.runs",
    ),
    (
        "layers",
        "parity/api/views.py",
        "from parity.dashboard import presenters",
        "parity.api.views -> parity.dashboard.presenters",
    ),
    (
        "layers",
        "parity/selectors/runs.py",
        "from parity.api import views",
        "parity.selectors.runs -> parity.api.views",
    ),
    (
        "layers",
        "parity/storage/partitions.py",
        "from parity.services import retention",
        "parity.storage.partitions -> parity.services.retention",
    ),
    (
        "layers",
        "ingest/writer/results.py",
        "from parity.services import variants",
        "ingest.writer.results -> parity.services.variants",
    ),
    (
        "layers",
        "parity/models/trust.py",
        "from parity.oidc import issuers",
        "parity.models.trust -> parity.oidc.issuers",
    ),
    (
        "layers",
        "parity/selectors/operations.py",
        "from parity.health import checks",
        "parity.selectors.operations -> parity.health.checks",
    ),
    (
        "infrastructure",
        "parity/telemetry/heartbeat.py",
        "from parity.selectors import operations",
        "parity.telemetry.heartbeat -> parity.selectors.operations",
    ),
    (
        "infrastructure",
        "parity/raw_storage.py",
        "from parity.models import Upload",
        "parity.raw_storage -> parity.models",
    ),
    (
        "pure",
        "parity/pure/oidc_claims.py",
        "from parity.models import TrustRule",
        "parity.pure.oidc_claims -> parity.models",
    ),
    (
        "oidc-keys-http-only",
        "parity/oidc/issuers.py",
        "from django.core.cache import cache",
        "parity.oidc.issuers -> django.core.cache",
    ),
    (
        "outbound-room",
        "parity/services/webhooks.py",
        "import requests",
        "parity.services.webhooks -> requests",
    ),
    (
        "outbound-room",
        "parity/sign_in/groups.py",
        "import urllib3",
        "parity.sign_in.groups -> urllib3",
    ),
]


def _python_files_only(folder: str, names: list[str]) -> list[str]:
    return [
        name
        for name in names
        if name == "__pycache__"
        or not (name.endswith(".py") or os.path.isdir(os.path.join(folder, name)))
    ]


@pytest.fixture
def code_copy(tmp_path) -> Path:
    for package in ("ingest", "parity"):
        shutil.copytree(REPO_DIR / package, tmp_path / package, ignore=_python_files_only)
    return tmp_path


def _lint_imports(root: Path, contract: str) -> subprocess.CompletedProcess:
    # lint-imports puts its working directory first on sys.path: it reads the copy.
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", "--contract", contract],
        cwd=root,
        env={"PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("contract", "module", "statement", "reported"),
    CROSSINGS,
    ids=[f"{c[0]}:{c[1]}" for c in CROSSINGS],
)
def test_crossing_a_wall_breaks_its_contract(code_copy, contract, module, statement, reported):
    shutil.copy(REPO_DIR / ".importlinter", code_copy / ".importlinter")
    before = _lint_imports(code_copy, contract)
    assert reported not in before.stdout, before.stdout

    with (code_copy / module).open("a") as source:
        source.write(f"\n{statement}  # crossing the wall\n")
    after = _lint_imports(code_copy, contract)

    assert after.returncode == 1, after.stdout + after.stderr
    assert "BROKEN" in after.stdout
    assert reported in after.stdout
