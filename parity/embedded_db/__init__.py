"""An embedded Postgres for machines without a database server (DATABASE_URL unset).

Settings only describe it (``embedded_database``). Its Django backend (``base.py``, this
package is the ``ENGINE``) starts the server when the first connection is opened, so importing
settings starts nothing, and every process that does use the database (manage.py, the web
process, a worker, the tests) gets it running without knowing about it.
"""

import logging
import os
import signal
import time
import warnings
from pathlib import Path
from typing import Any

EMBEDDED_DB_NAME = "parity"
_started: set[Path] = set()


def embedded_database(data_dir: Path, *, conn_max_age: int) -> dict[str, Any]:
    """Django's DATABASES entry for a pgserver instance in ``data_dir`` (its socket lives there)."""
    return {
        "ENGINE": "parity.embedded_db",
        "NAME": EMBEDDED_DB_NAME,
        "USER": "postgres",
        "HOST": str(data_dir),
        "CONN_MAX_AGE": conn_max_age,
        "CONN_HEALTH_CHECKS": True,
    }


def embedded_database_start(data_dir: Path) -> None:
    """Start (or reuse) the pgserver instance in ``data_dir`` and create the database, once per
    process. The server outlives this process, so the web process, the worker and management
    commands share it; pgserver reuses a running instance found in the folder."""
    if data_dir in _started:
        return
    # pgserver logs each step (and initdb's whole output) at INFO, and platformdirs warns on
    # import when XDG_RUNTIME_DIR is unset: noise on every manage.py command, not news.
    logging.getLogger("pgserver").setLevel(logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver

    data_dir.mkdir(parents=True, exist_ok=True)
    server = _server_get(pgserver, data_dir)
    exists = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{EMBEDDED_DB_NAME}';")
    if "1 row" not in exists:
        server.psql(f"CREATE DATABASE {EMBEDDED_DB_NAME};")
    _started.add(data_dir)


def _server_get(pgserver, data_dir: Path, attempts: int = 3):
    """pgserver's server in ``data_dir``, started if need be. pgserver asserts on the lines of
    ``postmaster.pid``, which a Postgres still starting up (another process started it a
    moment ago) has not all written yet: on a busy machine, a second look a moment later
    finds them."""
    for attempt in range(1, attempts + 1):
        try:
            return pgserver.get_server(str(data_dir), cleanup_mode=None)
        except AssertionError:
            if attempt == attempts:
                raise
            time.sleep(attempt)


def embedded_database_stop(data_dir: Path) -> bool:
    """Stop the pgserver instance in ``data_dir`` (Postgres's fast shutdown: open connections
    are closed), and wait until it has exited. False when none was running."""
    import psutil

    pid_file = data_dir / "postmaster.pid"
    if not pid_file.exists():
        return False
    pid = int(pid_file.read_text().split("\n", 1)[0])
    try:
        postmaster = psutil.Process(pid)
        if postmaster.name() != "postgres":  # a stale file, its pid since reused
            return False
        os.kill(pid, signal.SIGINT)
        postmaster.wait(timeout=60)
    except psutil.NoSuchProcess:
        return False
    return True
