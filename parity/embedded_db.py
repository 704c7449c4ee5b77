"""An embedded Postgres for machines without a database server (DATABASE_URL unset).

Settings only describe it (``embedded_database``); the entry points that use the database
(manage.py, the WSGI app, Celery's worker and beat, the test session) start it with
``embedded_database_ensure``, so importing settings never starts a server.
"""

from pathlib import Path
from typing import Any

EMBEDDED_DB_NAME = "parity"


def embedded_database(data_dir: Path) -> dict[str, Any]:
    """Django's DATABASES entry for a pgserver instance in ``data_dir`` (its socket lives there)."""
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": EMBEDDED_DB_NAME,
        "USER": "postgres",
        "HOST": str(data_dir),
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
    }


def embedded_database_start(data_dir: Path) -> None:
    """Start (or reuse) the pgserver instance in ``data_dir`` and create the database once.

    The server keeps running after this process exits so the web process, the worker and
    management commands share it; pgserver reuses a running instance found in the folder.
    """
    import pgserver

    data_dir.mkdir(parents=True, exist_ok=True)
    server = pgserver.get_server(str(data_dir), cleanup_mode=None)
    exists = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{EMBEDDED_DB_NAME}';")
    if "1 row" not in exists:
        server.psql(f"CREATE DATABASE {EMBEDDED_DB_NAME};")


def embedded_database_ensure() -> None:
    """Start the embedded Postgres if the settings use it; nothing when DATABASE_URL is set."""
    from django.conf import settings

    data_dir = getattr(settings, "PARITY_EMBEDDED_PGDATA", None)
    if data_dir is not None:
        embedded_database_start(Path(data_dir))
