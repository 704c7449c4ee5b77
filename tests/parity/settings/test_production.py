"""Secure by default: manage.py, parity.wsgi and parity.celery start with the production
settings, which need a SECRET_KEY (and say how to run locally without one; a manage.py command
other than runserver without one is a laptop's and takes the local settings) and pass
``check --deploy`` without a warning. Each runs in a fresh Python process, as a server would."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DATABASE_URL = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")


def run(*args: str, **env: str) -> subprocess.CompletedProcess:
    """``python *args`` with the environment a bare server gets: no DJANGO_SETTINGS_MODULE
    (pytest-django sets one), no SECRET_KEY unless given, a real Postgres (not the embedded
    one)."""
    base = {
        k: v for k, v in os.environ.items() if k not in {"DJANGO_SETTINGS_MODULE", "SECRET_KEY"}
    }
    base["DATABASE_URL"] = DATABASE_URL
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_has_no_warnings():
    done = run("manage.py", "check", "--deploy", SECRET_KEY=secrets.token_urlsafe(50))
    assert done.returncode == 0, done.stderr
    assert "System check identified no issues (1 silenced)." in done.stdout
    assert "WARNINGS" not in done.stdout + done.stderr


def test_manage_wsgi_and_celery_default_to_production():
    show = "from django.conf import settings; print(settings.SETTINGS_MODULE, settings.DEBUG)"
    key = secrets.token_urlsafe(50)
    manage = run("manage.py", "shell", "--no-imports", "-c", show, SECRET_KEY=key)
    assert manage.stdout.split() == ["parity.settings.production", "False"], manage.stderr
    for module in ("parity.wsgi", "parity.celery"):
        done = run("-c", f"import django, {module}; django.setup(); {show}", SECRET_KEY=key)
        assert done.stdout.split() == ["parity.settings.production", "False"], done.stderr


@pytest.mark.parametrize(
    "args", [("manage.py", "runserver", "--noreload"), ("-c", "import parity.wsgi")]
)
def test_without_a_secret_key_a_server_says_what_to_do(args):
    done = run(*args)
    assert done.returncode != 0
    assert "KeyError" not in done.stderr
    assert "ImproperlyConfigured: SECRET_KEY is not set" in done.stderr
    assert "DJANGO_SETTINGS_MODULE=parity.settings.local" in done.stderr


def test_a_command_without_a_secret_key_is_a_laptops():
    # Production cannot load without SECRET_KEY, so a bare command (not a server) is local.
    show = "from django.conf import settings; print(settings.SETTINGS_MODULE)"
    done = run("manage.py", "shell", "--no-imports", "-c", show)
    assert done.stdout.split() == ["parity.settings.local"], done.stderr
    assert "local settings" in done.stderr


def test_the_local_settings_still_need_no_secret():
    done = run("manage.py", "check", DJANGO_SETTINGS_MODULE="parity.settings.local")
    assert done.returncode == 0, done.stderr
