"""An embedded Postgres for machines without a database server (DATABASE_URL unset)."""

from pathlib import Path
from typing import Any

EMBEDDED_DB_NAME = "parity"


def embedded_database(data_dir: Path) -> dict[str, Any]:
    """Start (or reuse) a pgserver instance in ``data_dir`` and return Django's DATABASES entry.

    The server keeps running after this process exits so the web process, the worker and
    management commands share it; pgserver reuses a running instance found in the folder.
    """
    import pgserver

    data_dir.mkdir(parents=True, exist_ok=True)
    server = pgserver.get_server(str(data_dir), cleanup_mode=None)
    exists = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{EMBEDDED_DB_NAME}';")
    if "1 row" not in exists:
        server.psql(f"CREATE DATABASE {EMBEDDED_DB_NAME};")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": EMBEDDED_DB_NAME,
        "USER": "postgres",
        "HOST": str(data_dir),
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
    }
