"""The `.env` file: what a laptop writes there reaches the settings; the environment wins."""

import os
import subprocess
import sys

from django.conf import settings

from parity.settings.dotenv import dotenv_values
from tests.conftest import FIXTURES_DIR

ENV_FILE = FIXTURES_DIR / "settings" / "example.env"


def test_values_comments_quotes_and_exports_are_read_as_compose_does():
    assert dotenv_values(ENV_FILE.read_text()) == {
        "PARITY_MAX_NAME_CHARS": "1234",
        "PARITY_DIGEST_CRON": "0 9 * * tue",
        "SITE_URL": "https://parity.example.org",
        "QUOTED": "a # not a comment",
        "EMPTY": "",
    }


def run_settings(env: dict[str, str]) -> str:
    code = (
        "from django.conf import settings; print(settings.PARITY_MAX_NAME_CHARS, settings.SITE_URL)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        env={
            **{
                k: v
                for k, v in os.environ.items()
                if k not in ("SITE_URL", "PARITY_MAX_NAME_CHARS")
            },
            "DJANGO_SETTINGS_MODULE": "parity.settings.test",
            "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/postgres",
            "PARITY_ENV_FILE": str(ENV_FILE),
            **env,
        },
        capture_output=True,
        text=True,
        check=True,
        cwd=settings.BASE_DIR,
    )
    return result.stdout.strip()


def test_the_file_fills_in_unset_settings():
    assert run_settings({}) == "1234 https://parity.example.org"


def test_the_environment_wins_over_the_file():
    assert run_settings({"PARITY_MAX_NAME_CHARS": "99"}) == "99 https://parity.example.org"
