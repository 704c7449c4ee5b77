"""The pages' `manage.py` lines work as a newcomer types them after `make demo`: with the
system's python (no Django: manage.py runs again under the checkout's .venv), no settings named
(no SECRET_KEY: the local settings, not production's refusal) and no SMTP server (the digest is
printed, and says so, with links to the address served)."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from tests.e2e.conftest import _database_url

REPO_DIR = Path(__file__).resolve().parents[2]


def laptop_run(command: str, **extra_env: str) -> subprocess.CompletedProcess:
    """``command`` in a laptop's shell: the first python3 on PATH outside the virtualenv, no
    DJANGO_SETTINGS_MODULE (pytest-django sets one), SECRET_KEY, SITE_URL or SMTP server; the
    test database."""
    unset = {"DJANGO_SETTINGS_MODULE", "SECRET_KEY", "VIRTUAL_ENV", "SITE_URL", "EMAIL_HOST"}
    env = {k: v for k, v in os.environ.items() if k not in unset} | extra_env
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


def digest_lines(*commands: str) -> list[str]:
    """docs/digest.md's lines that start with one of ``commands``, without their comments."""
    text = (REPO_DIR / "docs" / "digest.md").read_text(encoding="utf-8")
    lines = [line.split("#")[0].strip() for line in text.splitlines()]
    return [line for line in lines if line.startswith(commands)]


@pytest.mark.django_db(transaction=True)
def test_the_digests_commands_print_the_mail_with_the_served_address(project, tmp_path):
    # `make demo PORT=8765` records the address it serves where the local settings read it.
    (tmp_path / "site_url").write_text("http://127.0.0.1:8765\n")
    (subscribe,) = digest_lines("python manage.py subscribe alice@")
    (send,) = digest_lines("python manage.py send_digest pytorch-xla")[-1:]
    assert send == "python manage.py send_digest pytorch-xla"  # last week's, as written

    subscribed = laptop_run(subscribe, PARITY_VAR_DIR=str(tmp_path))
    assert subscribed.returncode == 0, subscribed.stderr
    assert "Unsubscribe link: http://127.0.0.1:8765/digest/unsubscribe/" in subscribed.stdout
    sent = laptop_run(send, PARITY_VAR_DIR=str(tmp_path))
    assert sent.returncode == 0, sent.stderr
    assert "To: alice@example.org" in sent.stdout
    assert "http://127.0.0.1:8765/p/pytorch-xla/" in sent.stdout
    assert ":8000" not in sent.stdout
    assert "The mail was printed above, not sent: no SMTP server is set" in sent.stdout
