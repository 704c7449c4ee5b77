"""The CI files' wheel installed by pip from the live stack's server into a fresh virtualenv (no
system site-packages, pytest and nothing else in it), as a CI job installs it:

    pip install --force-reinstall --no-index --find-links "$PARITY_URL/ci/" parity-dashboard-ci

then the ``parity-ci`` command runs, and pytest loads the plugin by its entry point, without
``-p``: inactive in a plain run, applying the server's exemptions with ``--parity-backend``.
"""

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.error import HTTPError
from urllib.request import HTTPRedirectHandler, build_opener

import pytest

from parity import __version__
from tests.parity.clients.conftest import FIXTURES_DIR, clean_environment
from tests.parity.clients.reports import COMPLEX_MESSAGE, tpu_exemptions

pytestmark = pytest.mark.e2e

STEP_SECONDS = 120
# Variables of this run that would change what the virtualenv's pip or pytest do.
_NOT_PASSED = (
    "PYTHONPATH",
    "PYTHONHOME",
    "VIRTUAL_ENV",
    "DJANGO_SETTINGS_MODULE",
    "PYTEST_ADDOPTS",
    "PYTEST_PLUGINS",
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
)
TRIVIAL_TEST = "def test_one_plus_one():\n    assert 1 + 1 == 2\n"


class Venv:
    def __init__(self, path: Path):
        self.path = path
        self.bin = path / "bin"
        version = f"python{sys.version_info.major}.{sys.version_info.minor}"
        self.site_packages = path / "lib" / version / "site-packages"
        env = {k: v for k, v in clean_environment().items() if k not in _NOT_PASSED}
        self.env = {**env, "PATH": f"{self.bin}{os.pathsep}{env.get('PATH', '')}"}

    def run(self, *args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess:
        """``args[0]`` from the virtualenv's ``bin/``, output captured as text."""
        return subprocess.run(
            [str(self.bin / args[0]), *args[1:]],
            env={**self.env, **env},
            cwd=cwd or self.path,
            capture_output=True,
            text=True,
            timeout=STEP_SECONDS,
            check=False,
        )

    def pip(self, *args: str) -> subprocess.CompletedProcess:
        return self.run("python", "-m", "pip", "--disable-pip-version-check", *args)


def _said(done: subprocess.CompletedProcess) -> str:
    return f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"


@pytest.fixture(scope="session")
def pytest_wheels(request, tmp_path_factory) -> Path:
    """A folder of pytest's wheel and its dependencies', for ``pip install --no-index``:
    downloaded once into pytest's cache (this run's temporary folder without one)."""
    cache = getattr(request.config, "cache", None)  # none under -p no:cacheprovider
    folder = cache.mkdir("parity-venv-wheels") if cache else tmp_path_factory.mktemp("wheels")
    done_marker = folder / "downloaded"
    if not done_marker.exists():
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "pytest", "-d", str(folder)],
            capture_output=True,
            text=True,
            timeout=STEP_SECONDS,
            check=False,
        )
        if done.returncode:
            pytest.skip(f"cannot download pytest's wheel for a fresh virtualenv: {_said(done)}")
        done_marker.touch()
    return folder


@pytest.fixture(scope="module")
def venv(stack, pytest_wheels, tmp_path_factory) -> Iterator[Venv]:
    """A fresh virtualenv with pytest, and the CI files installed from the server as the
    documentation says."""
    path = tmp_path_factory.mktemp("venv")
    made = subprocess.run(
        [sys.executable, "-m", "venv", str(path)],
        capture_output=True,
        text=True,
        timeout=STEP_SECONDS,
        check=False,
    )
    if made.returncode:
        pytest.skip(f"cannot create a virtualenv here (python -m venv): {_said(made)}")
    venv = Venv(path)
    pytest_install = venv.pip("install", "--no-index", "--find-links", str(pytest_wheels), "pytest")
    assert pytest_install.returncode == 0, _said(pytest_install)

    # docs/ci.md's command, word for word.
    installed = venv.pip(
        *("install", "--force-reinstall", "--no-index", "--find-links"),
        *(f"{stack.base_url}/ci/", "parity-dashboard-ci"),
    )

    assert installed.returncode == 0, _said(installed)
    assert f"Successfully installed parity-dashboard-ci-{__version__}" in installed.stdout
    yield venv
    shutil.rmtree(path, ignore_errors=True)


def test_the_parity_ci_command_runs_the_client(venv):
    help_text = venv.run("parity-ci", "--help")
    version = venv.run("parity-ci", "--version")

    assert help_text.returncode == 0, _said(help_text)
    assert "upload" in help_text.stdout
    assert "files" in help_text.stdout
    assert version.stdout.strip() == f"parity_ci {__version__}", _said(version)


def test_pytest_loads_the_plugin_by_its_entry_point(venv):
    done = venv.run("python", "-m", "pytest", "--help")
    where = venv.run("python", "-c", "import parity_pytest; print(parity_pytest.__file__)")

    assert done.returncode == 0, _said(done)
    # from the wheel pip installed, not from this repository
    assert where.stdout.strip() == str(venv.site_packages / "parity_pytest.py"), _said(where)
    assert "parity exemptions (parity_pytest):" in done.stdout
    assert "--parity-backend=NAME" in done.stdout


def test_without_a_backend_the_installed_plugin_changes_nothing(venv, tmp_path):
    (tmp_path / "test_trivial.py").write_text(TRIVIAL_TEST)

    plain = venv.run("python", "-m", "pytest", "-p", "no:cacheprovider", cwd=tmp_path)
    # The single-file way's -p names the same plugin: pytest loads it once, no clash.
    with_p = venv.run(
        "python", "-m", "pytest", "-p", "parity_pytest", "-p", "no:cacheprovider", cwd=tmp_path
    )

    assert plain.returncode == 0, _said(plain)
    assert "1 passed" in plain.stdout
    assert "parity:" not in plain.stdout + plain.stderr
    assert with_p.returncode == 0, _said(with_p)
    assert "1 passed" in with_p.stdout


def test_the_wheel_s_full_url_installs_too(stack, venv):
    # pip refuses /ci/parity_ci.whl by its name alone; where it redirects, pip installs.
    opener = build_opener(_NoRedirect)
    with pytest.raises(HTTPError) as redirect:
        opener.open(f"{stack.base_url}/ci/parity_ci.whl", timeout=10)
    location = redirect.value.headers["Location"]

    done = venv.pip("install", "--force-reinstall", "--no-deps", f"{stack.base_url}{location}")

    assert redirect.value.code == 302
    assert location == f"/ci/parity_dashboard_ci-{__version__}-py3-none-any.whl"
    assert done.returncode == 0, _said(done)


class _NoRedirect(HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


@pytest.mark.django_db(transaction=True)
def test_with_a_backend_the_installed_plugin_applies_the_server_s_exemptions(
    venv, live, http_api, tmp_path
):
    tpu_exemptions(
        http_api,
        complex64="test/test_ops.py::TestOps::test_*_complex64",
        flaky="test/test_collectives.py::test_all_reduce_deadline",
        mesh="test/test_sharding.py",
    )
    shutil.copytree(FIXTURES_DIR / "pytest_suite", tmp_path, dirs_exist_ok=True)

    done = venv.run(
        *("python", "-m", "pytest", "-p", "no:cacheprovider", "-rs", "--parity-backend", "tpu"),
        cwd=tmp_path,
        SUITE_DEVICE="tpu",
        PARITY_URL=live.base_url,
        PARITY_TOKEN=http_api.token,
        PARITY_PROJECT="pytorch-xla",
    )

    assert done.returncode == 0, _said(done)
    assert "2 passed, 5 skipped" in done.stdout
    assert "parity: exempted tests of tpu: 2 intended, 1 quarantine, 2 tracked" in done.stdout
    assert COMPLEX_MESSAGE in done.stdout
