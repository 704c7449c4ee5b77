"""With DATABASE_URL unset, the embedded Postgres starts at the first connection, not at import."""

import os
import subprocess
import sys

import pgserver
import psutil
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


def test_a_management_command_prints_no_database_chatter(var_dir):
    # The first command initializes the data folder: pgserver logs every step (and initdb's
    # output) at INFO, and platformdirs warns without XDG_RUNTIME_DIR.
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "XDG_RUNTIME_DIR")}
    env |= {"DJANGO_SETTINGS_MODULE": "parity.settings.local", "PARITY_VAR_DIR": str(var_dir)}
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "--plan"],
        env=env,
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )

    assert (var_dir / "pgdata" / "PG_VERSION").exists()
    assert "pgserver" not in done.stderr and "initdb" not in done.stderr
    assert "XDG_RUNTIME_DIR" not in done.stderr
    assert done.stderr == ""


def test_stop_stops_the_server_the_first_connection_started(var_dir):
    run_python(
        "import django; django.setup(); from django.db import connection; connection.cursor()",
        var_dir,
    )
    pid = int((var_dir / "pgdata" / "postmaster.pid").read_text().split()[0])

    stopped = run_python("from parity.embedded_db.__main__ import main; main(['stop'])", var_dir)

    assert "Stopped the embedded Postgres" in stopped.stdout
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    again = run_python("from parity.embedded_db.__main__ import main; main(['stop'])", var_dir)
    assert "Nothing to stop" in again.stdout
