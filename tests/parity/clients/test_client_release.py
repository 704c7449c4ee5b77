"""parity-ci ready to publish: ``parity/clients/pyproject.toml`` built as the release workflow
builds it (``python -m build``) gives the wheel the server serves, by name, version, summary,
Python floor, entry points and the modules' bytes; the version has one literal; the release
workflow publishes with PyPI's trusted publishing from one job only."""

import configparser
import email.parser
import io
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml

import parity
from parity.ci_files import CLIENTS_DIR
from parity.ci_wheel import MCP_EXTRA, wheel_filename
from parity.clients import parity_ci

REPO_DIR = Path(__file__).resolve().parents[3]
WORKFLOW = REPO_DIR / ".github" / "workflows" / "release-client.yml"
MODULES = ["parity_ci.py", "parity_mcp.py", "parity_pytest.py", "parity_unittest.py"]
BUILD_SECONDS = 300
# What pip says when it cannot reach an index for the build's isolated environment.
_OFFLINE = ("Could not find a version that satisfies", "No matching distribution", "NewConnection")


def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def _build_command() -> str:
    runs = [step.get("run", "") for step in _workflow()["jobs"]["build"]["steps"]]
    (command,) = [run for run in runs if run.startswith("python -m build ")]
    return command


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """``dist/`` of the release workflow's build command, run in a copy of the repository's
    parity/clients/ (setuptools writes its egg-info beside the sources)."""
    checkout = tmp_path_factory.mktemp("checkout")
    shutil.copytree(
        CLIENTS_DIR,
        checkout / "parity" / "clients",
        ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"),
    )
    done = subprocess.run(
        [sys.executable, *_build_command().split()[1:]],
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=BUILD_SECONDS,
        check=False,
    )
    said = f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    if done.returncode and any(sign in said for sign in _OFFLINE):
        pytest.skip(f"no index to fetch the build backend (setuptools) from: {said}")
    assert done.returncode == 0, said
    return checkout / "dist"


@pytest.fixture
def served(client) -> zipfile.ZipFile:
    response = client.get(f"/ci/{wheel_filename(parity.__version__)}")
    assert response.status_code == 200
    return zipfile.ZipFile(io.BytesIO(response.content))


def _metadata(wheel: zipfile.ZipFile) -> email.message.Message:
    (name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    return email.parser.Parser().parsestr(wheel.read(name).decode())


def _entry_points(wheel: zipfile.ZipFile) -> dict[str, dict[str, str]]:
    (name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    parser = configparser.ConfigParser(delimiters=("=",))
    parser.optionxform = str  # entry point names keep their case
    parser.read_string(wheel.read(name).decode())
    return {section: dict(parser[section]) for section in parser.sections()}


def test_the_built_wheel_is_the_served_wheel(built, served):
    wheel_path = built / wheel_filename(parity.__version__)
    assert wheel_path.is_file(), sorted(p.name for p in built.iterdir())
    wheel = zipfile.ZipFile(wheel_path)

    mine, theirs = _metadata(wheel), _metadata(served)
    for field in ("Name", "Version", "Summary", "Requires-Python"):
        assert mine[field] == theirs[field], field
    # The standard library only, but for the MCP server's optional SDK (parity-ci[mcp]).
    assert mine.get_all("Provides-Extra") == theirs.get_all("Provides-Extra") == ["mcp"]
    assert mine.get_all("Requires-Dist") == theirs.get_all("Requires-Dist") == [MCP_EXTRA]
    assert _entry_points(wheel) == _entry_points(served)
    top_level = sorted(n for n in wheel.namelist() if "/" not in n)
    assert top_level == sorted(n for n in served.namelist() if "/" not in n) == MODULES
    assert {n: wheel.read(n) for n in MODULES} == {n: served.read(n) for n in MODULES}


def test_the_sdist_holds_what_the_wheel_is_built_from(built):
    (sdist,) = built.glob("parity_dashboard_ci-*.tar.gz")
    assert sdist.name == f"parity_dashboard_ci-{parity.__version__}.tar.gz"
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"pyproject.toml", "README.md", *MODULES} <= names


def test_the_version_has_one_literal():
    assignments = [
        path.relative_to(REPO_DIR).as_posix()
        for folder in ("parity", "ingest", "tools")
        for path in (REPO_DIR / folder).rglob("*.py")
        if re.search(r"""^__version__ = ["']""", path.read_text(encoding="utf-8"), re.M)
    ]
    assert assignments == ["parity/clients/parity_ci.py"]
    assert parity.__version__ == parity_ci.__version__
    assert 'dynamic = ["version"]' in (CLIENTS_DIR / "pyproject.toml").read_text()


def test_the_release_publishes_with_trusted_publishing_from_one_job():
    workflow = _workflow()
    jobs = workflow["jobs"]

    assert workflow["permissions"] == {"contents": "read"}
    assert "permissions" not in jobs["build"]  # the build never holds the token PyPI trusts
    assert jobs["publish"]["permissions"] == {"id-token": "write"}
    assert jobs["publish"]["needs"] == "build"
    assert jobs["publish"]["environment"]["name"] == "pypi"
    uses = [step.get("uses", "") for step in jobs["publish"]["steps"]]
    assert "pypa/gh-action-pypi-publish@release/v1" in uses
    assert not any("password" in step.get("with", {}) for step in jobs["publish"]["steps"])
    assert _build_command() == "python -m build parity/clients --outdir dist"


def test_the_release_checks_the_tag_against_the_client_s_version(tmp_path):
    (step,) = [
        s for s in _workflow()["jobs"]["build"]["steps"] if "GITHUB_REF_NAME" in s.get("run", "")
    ]
    script = step["run"].replace("python ", f"{sys.executable} ", 1)

    def check(tag: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
            env={"GITHUB_REF_NAME": tag, "PATH": "/usr/bin:/bin"},
            cwd=REPO_DIR,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    assert check(f"v{parity.__version__}").returncode == 0
    wrong = check("v9.9.9")
    assert wrong.returncode == 1
    assert f"::error::tag v9.9.9 but parity_ci.py says 'parity_ci {parity.__version__}'" in (
        wrong.stdout
    )
