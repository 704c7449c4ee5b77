"""PARITY_SECRETS_KEYS is checked when settings load: a key Fernet cannot use stops the start
with a message saying how to make one, rather than failing the first secret written."""

import subprocess
import sys
from pathlib import Path

from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parents[3]


def settings_loaded(keys: str) -> subprocess.CompletedProcess:
    code = "from django.conf import settings; print(settings.PARITY_SECRETS_KEYS)"
    env = {"DJANGO_SETTINGS_MODULE": "parity.settings.local", "PARITY_SECRETS_KEYS": keys}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**env, "PATH": "/usr/bin:/bin", "PARITY_ENV_FILE": "/dev/null"},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_key_fernet_cannot_use_stops_the_start_saying_how_to_make_one():
    done = settings_loaded("not-a-key")
    assert done.returncode != 0
    assert "PARITY_SECRETS_KEYS" in done.stderr and "secrets_keys new" in done.stderr


def test_keys_are_read_newest_first():
    new, old = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    done = settings_loaded(f"{new}, {old}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == repr([new, old])
