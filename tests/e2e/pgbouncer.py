"""A PgBouncer a test owns (Debian's ``pgbouncer`` package), in transaction mode in front of the
test database: started on a free port as a subprocess with its own ini and userlist, stopped by
its PID.

Its pool is smaller than the stack's connections (gunicorn's threads and the worker's children),
so clients take turns on a few server connections, as they do in production behind a pooler:
state one client leaves on a server connection (a session lock, a cursor kept open, a ``SET``)
meets the next client there, or is missing where its owner looks for it next.
"""

import os
import pwd
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg2
from django.db import connection

from tests.e2e.redis_server import free_port

START_SECONDS = 10
# Debian installs it in /usr/sbin, which a user's PATH may leave out.
EXECUTABLE = shutil.which("pgbouncer") or shutil.which("pgbouncer", path="/usr/sbin")
POOL_SIZE = 3  # server connections per database and user


@dataclass
class OwnedPgBouncer:
    """``database`` on ``upstream`` (host, port), served under the same name."""

    database: str
    user: str
    upstream: tuple[str, int]
    port: int = field(default_factory=free_port)
    directory: Path | None = None
    popen: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"postgres://{self.user}@127.0.0.1:{self.port}/{self.database}"

    def start(self) -> None:
        # pgbouncer will not run as root: it is told to switch to postgres, which must read
        # its ini and write its log, so they live in a directory of their own, not pytest's.
        self.directory = Path(tempfile.mkdtemp(prefix="parity-pgbouncer-"))
        switch = unprivileged_user("pgbouncer")
        host, upstream_port = self.upstream
        ini = self.directory / "pgbouncer.ini"
        ini.write_text(
            "[databases]\n"
            f"{self.database} = host={host} port={upstream_port} dbname={self.database}\n"
            "[pgbouncer]\n"
            f"listen_addr = 127.0.0.1\nlisten_port = {self.port}\nunix_socket_dir =\n"
            f"auth_type = trust\nauth_file = {self.directory / 'userlist.txt'}\n"
            f"admin_users = {self.user}\n"
            f"pool_mode = transaction\ndefault_pool_size = {POOL_SIZE}\n"
            "max_client_conn = 500\n"
            f"logfile = {self.directory / 'pgbouncer.log'}\n"
        )
        (self.directory / "userlist.txt").write_text(f'"{self.user}" ""\n')
        command = [EXECUTABLE or "pgbouncer", "-q", str(ini)]
        if switch is not None:
            self.directory.chmod(0o755)
            shutil.chown(self.directory, user=switch)
            command[1:1] = ["-u", switch]
        self.popen = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + START_SECONDS
        while not self.answers():
            if self.popen.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"pgbouncer on port {self.port} did not start: {self.log()}")
            time.sleep(0.05)

    def answers(self) -> bool:
        try:
            psycopg2.connect(self.url, connect_timeout=1).close()
        except psycopg2.OperationalError:
            return False
        return True

    def stats(self) -> dict[str, int]:
        """Its ``SHOW STATS`` row for the database (the totals lag by up to a minute)."""
        return next(row for row in self.show("STATS") if row["database"] == self.database)

    def client_names(self) -> set[str]:
        """The application names of the clients connected to the database through it."""
        clients = self.show("CLIENTS")
        return {c["application_name"] for c in clients if c["database"] == self.database}

    def show(self, what: str) -> list[dict]:
        """A ``SHOW`` of its admin console, as rows by column name."""
        admin = psycopg2.connect(f"postgres://{self.user}@127.0.0.1:{self.port}/pgbouncer")
        admin.autocommit = True
        try:
            with admin.cursor() as cursor:
                cursor.execute(f"SHOW {what}")
                names = [column.name for column in cursor.description]
                return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        finally:
            admin.close()

    def log(self) -> str:
        path = self.directory / "pgbouncer.log" if self.directory else None
        return path.read_text(errors="replace")[-5000:] if path and path.exists() else ""

    def stop(self) -> None:
        if self.popen is not None and self.popen.poll() is None:
            self.popen.terminate()
            self.popen.wait(timeout=START_SECONDS)
        self.popen = None
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)


def pgbouncer_for_test_database() -> OwnedPgBouncer:
    """A PgBouncer (not started) in front of pytest-django's test database, under its name."""
    db = connection.settings_dict  # the test database, once django_db_setup ran
    return OwnedPgBouncer(
        database=db["NAME"],
        user=db["USER"] or "postgres",
        upstream=(db["HOST"] or "127.0.0.1", int(db["PORT"] or 5432)),
    )


def unprivileged_user(program: str) -> str | None:
    """The user ``program`` (pgbouncer, Postgres) runs as when the test runs as root: postgres,
    as Debian runs them."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("postgres").pw_name
    except KeyError:
        raise AssertionError(
            f"{program} will not run as root, and there is no postgres user"
        ) from None
