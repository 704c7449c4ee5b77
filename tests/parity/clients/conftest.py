"""The CI-side files of ``parity/clients/`` are standalone modules (``import parity_ci``), as on
a CI machine: their folder goes on ``sys.path``. Tests of the client against a live server
reuse the end-to-end stack (gunicorn and a Celery worker over Redis) of ``tests/e2e``.
"""

import glob
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from parity.services.projects import upload_token_create
from tests.e2e import conftest as e2e

# The live stack's fixtures as tests/e2e defines them (a stack for this package), and its hook
# that adds the stack's logs to a failing test's report.
stack = e2e.stack
live = e2e.live
http_api = e2e.http_api
pytest_runtest_makereport = e2e.pytest_runtest_makereport

CLIENTS_DIR = Path(__file__).resolve().parents[3] / "parity" / "clients"
# Small test suites the runner integrations run; not tests of this suite.
FIXTURES_DIR = Path(__file__).resolve().parent / "fixtures"
collect_ignore = ["fixtures"]
if str(CLIENTS_DIR) not in sys.path:
    sys.path.insert(0, str(CLIENTS_DIR))

CLIENT_SECONDS = 180
# Variables a CI machine sets that would change what the client sends or writes.
# The attribute conventions (parity_ci.ATTRIBUTE_CONVENTIONS) too: a ROCm image sets them.
_CI_VARIABLES = (
    "GITHUB_",
    "GITLAB_",
    "CI_",
    "BUILDKITE",
    "PARITY_",
    "PYTORCH_ROCM_ARCH",
    "ROCM_VERSION",
    "CUDA_VERSION",
    "TEST_CONFIG",  # the suite's convention (parity_ci.SUITE_CONVENTIONS)
)


def clean_environment(**settings: str) -> dict[str, str]:
    """This process's environment without CI or parity variables, plus ``settings``; no proxy
    for the loopback servers the tests start."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_CI_VARIABLES)}
    env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost", **settings)
    return env


def client_run(
    *args: str, env: Mapping[str, str], python: str = sys.executable, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    """``python parity/clients/parity_ci.py ARGS`` as CI runs it, output captured as text."""
    return subprocess.run(
        [python, str(CLIENTS_DIR / "parity_ci.py"), *args],
        env=dict(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=CLIENT_SECONDS,
        check=False,
    )


def python38() -> str | None:
    """A Python 3.8 interpreter, the oldest the client supports, if this machine has one."""
    candidates = [
        os.environ.get("PARITY_TEST_PYTHON38"),
        shutil.which("python3.8"),
        *sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.8*/bin/python3.8"))),
    ]
    for candidate in filter(None, candidates):
        try:
            done = subprocess.run(
                [candidate, "-c", "import sys; print(sys.version_info[:2])"],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
        except OSError:
            continue
        if done.stdout.strip() == "(3, 8)":  # a pyenv shim of an unselected version fails
            return candidate
    return None


@pytest.fixture
def client_env(live, project) -> dict[str, str]:
    """Settings for the client: the live server, a fresh upload token, the test project."""
    return clean_environment(
        PARITY_URL=live.base_url,
        PARITY_TOKEN=upload_token_create(project=project),
        PARITY_PROJECT=project.slug,
    )


@pytest.fixture
def parity_ci_run(client_env) -> Callable[..., subprocess.CompletedProcess]:
    """Run the client against the live server: ``parity_ci_run("upload", folder, "--backend",
    "cpu")``; ``env=`` adds or overrides variables, ``python=`` picks the interpreter."""

    def run(*args: str, env: Mapping[str, str] | None = None, **options):
        return client_run(*args, env={**client_env, **(env or {})}, **options)

    return run
