"""With DATABASE_URL unset, the embedded Postgres starts at the first connection, not at import."""

import os
import subprocess
import sys

import pgserver
import pytest
from django.conf import settings


def run_python(code: str, var_dir) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env |= {"DJANGO_SETTINGS_MODULE": "parity.settings.local", "PARITY_VAR_DIR": str(var_dir)}
    return subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def test_importing_settings_starts_no_server(tmp_path):
    run_python(
        "import django; django.setup(); from django.conf import settings; settings.DATABASES",
        tmp_path,
    )

    assert not (tmp_path / "pgdata").exists()


@pytest.fixture
def var_dir(tmp_path):
    yield tmp_path
    if (tmp_path / "pgdata").exists():  # stop the server the test started
        pgserver.get_server(tmp_path / "pgdata", cleanup_mode="stop").cleanup()


def test_the_first_connection_starts_it(var_dir):
    code = (
        "import django; django.setup(); from django.db import connection; "
        "cursor = connection.cursor(); cursor.execute('select current_database()'); "
        "print(cursor.fetchone()[0])"
    )

    assert run_python(code, var_dir).stdout.strip() == "parity"
    assert (var_dir / "pgdata" / "PG_VERSION").exists()
