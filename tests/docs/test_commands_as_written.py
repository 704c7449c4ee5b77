"""The README's `manage.py` line works as a newcomer types it after `make demo`: with the
system's python (no Django: manage.py runs again under the checkout's .venv) and no settings
named (no SECRET_KEY: the local settings, not production's refusal)."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from tests.e2e.conftest import _database_url

REPO_DIR = Path(__file__).resolve().parents[2]


def laptop_run(command: str) -> subprocess.CompletedProcess:
    """``command`` in a laptop's shell: the first python3 on PATH outside the virtualenv, no
    DJANGO_SETTINGS_MODULE (pytest-django sets one) and no SECRET_KEY; the test database."""
    unset = {"DJANGO_SETTINGS_MODULE", "SECRET_KEY", "VIRTUAL_ENV"}
    env = {k: v for k, v in os.environ.items() if k not in unset}
    venv_bin = str(REPO_DIR / ".venv" / "bin")
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != venv_bin)
    env["DATABASE_URL"] = _database_url()
    python = shutil.which("python3", path=env["PATH"])
    assert python, "a system python3"
    args = command.split()
    assert args[0] == "python"
    return subprocess.run(
        [python, *args[1:]], cwd=REPO_DIR, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.django_db(transaction=True)
def test_the_readmes_token_line_prints_a_token_that_uploads(project):
    readme = (REPO_DIR / "README.md").read_text(encoding="utf-8")
    (command,) = re.findall(r"# (python manage\.py create_upload_token \S+)", readme)
    done = laptop_run(command)
    assert done.returncode == 0, done.stderr
    assert "local settings" in done.stderr  # it says which settings it took
    token = done.stdout.strip()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    # Authenticated: an empty upload is refused for its content (400), not its token (401).
    assert client.post("/api/v1/uploads/", {}).status_code == 400
