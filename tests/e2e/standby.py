"""A streaming replica a test owns: ``pg_basebackup`` of the test database's Postgres, started
with ``pg_ctl`` on a free port as a hot standby, stopped and removed by the test.

The copy is of the whole cluster (physical replication has no other kind), taken with a fast
checkpoint. Postgres will not run as root: as root, the backup and the server run as the
``postgres`` user, in a directory it owns. Debian keeps a cluster's configuration outside its
data directory, so the copy gets a small one of its own; the settings a standby must hold at
least as high as its primary are read from the primary.

The primary must accept replication connections from the test (a ``host replication`` line in
its ``pg_hba.conf``; ``.ci/run`` adds one): ``replication_refusal`` says when it does not.
"""

import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg2

from tests.e2e.pgbouncer import unprivileged_user
from tests.e2e.redis_server import free_port

BIN = Path("/usr/lib/postgresql/15/bin")
START_SECONDS = 120
# A standby refuses to start with any of these below its primary's.
AT_LEAST_PRIMARY = (
    "max_connections",
    "max_worker_processes",
    "max_wal_senders",
    "max_prepared_transactions",
    "max_locks_per_transaction",
)


def _tool(name: str) -> str | None:
    found = BIN / name
    return str(found) if found.exists() else shutil.which(name)


@dataclass
class OwnedStandby:
    """A standby of the Postgres at ``primary`` (host, port), reached as ``user``."""

    primary: tuple[str, int]
    user: str
    port: int = field(default_factory=free_port)
    directory: Path | None = None

    @property
    def data(self) -> Path:
        return self.directory / "data"

    def url(self, database: str, application_name: str) -> str:
        return (
            f"postgres://{self.user}@127.0.0.1:{self.port}/{database}"
            f"?application_name={application_name}"
        )

    def start(self) -> None:
        """Copy the primary, configure the copy as a standby, start it, and wait until it
        streams."""
        self.directory = Path(tempfile.mkdtemp(prefix="parity-standby-"))
        self.directory.chmod(0o700)
        if unprivileged_user("Postgres"):
            shutil.chown(self.directory, user=unprivileged_user("Postgres"))
        host, port = self.primary
        self._run(
            _tool("pg_basebackup") or "pg_basebackup",
            *("-h", host, "-p", str(port), "-U", self.user, "-D", str(self.data)),
            *("-R", "--checkpoint=fast", "--wal-method=stream", "--no-sync"),
        )
        self._configure()
        self.restart()

    def restart(self) -> None:
        """Start the standby (again) and wait until it streams from the primary."""
        self._ctl("start", "-w", "-t", str(START_SECONDS), "-l", str(self.directory / "log"))
        deadline = time.monotonic() + START_SECONDS
        while not self.streaming():
            if time.monotonic() > deadline:
                raise StandbyError(f"the standby does not stream:\n{self.log()}")
            time.sleep(0.2)

    def stop(self) -> None:
        """A fast shutdown: its sessions are ended, as when a replica host goes down."""
        if self.running():
            self._ctl("stop", "-m", "fast", "-w", "-t", str(START_SECONDS))

    def remove(self) -> None:
        if self.directory is None:
            return
        if self.running():
            self._ctl("stop", "-m", "immediate", "-w", "-t", str(START_SECONDS))
        shutil.rmtree(self.directory, ignore_errors=True)
        self.directory = None

    def running(self) -> bool:
        return self.directory is not None and (self.data / "postmaster.pid").exists()

    def query(self, statement: str, params: tuple = ()) -> tuple:
        """One row of ``statement`` on the standby (its postgres database)."""
        return _one(f"postgres://{self.user}@127.0.0.1:{self.port}/postgres", statement, params)

    def streaming(self) -> bool:
        try:
            standby, receiving = self.query(
                "SELECT pg_is_in_recovery(), EXISTS (SELECT FROM pg_stat_wal_receiver)"
            )
        except psycopg2.OperationalError:
            return False
        return standby and receiving

    def catch_up(self, *, seconds: float = 60) -> None:
        """Wait until the standby has replayed all the primary had written when called, and a
        commit made now: the lag a standby reports counts from its last replayed commit."""
        _one(self._primary_url(), "SELECT txid_current()")  # a commit, once the statement ends
        (position,) = _one(self._primary_url(), "SELECT pg_current_wal_insert_lsn()")
        deadline = time.monotonic() + seconds
        while not self.query("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (position,))[0]:
            if time.monotonic() > deadline:
                raise StandbyError(f"the standby did not replay up to {position}")
            time.sleep(0.1)

    def pause_replay(self) -> None:
        self.query("SELECT pg_wal_replay_pause()")
        while self.query("SELECT pg_get_wal_replay_pause_state()")[0] != "paused":
            time.sleep(0.05)

    def resume_replay(self) -> None:
        self.query("SELECT pg_wal_replay_resume()")

    def log(self) -> str:
        path = self.directory / "log" if self.directory else None
        return path.read_text(errors="replace")[-5000:] if path and path.exists() else ""

    def _primary_url(self) -> str:
        host, port = self.primary
        return f"postgres://{self.user}@{host}:{port}/postgres"

    def _configure(self) -> None:
        setting = "SELECT setting FROM pg_settings WHERE name = %s"
        floors = {name: _one(self._primary_url(), setting, (name,))[0] for name in AT_LEAST_PRIMARY}
        (self.data / "postgresql.conf").write_text(
            f"port = {self.port}\nlisten_addresses = '127.0.0.1'\n"
            f"unix_socket_directories = '{self.directory}'\n"
            "hot_standby = on\nshared_buffers = 32MB\nfsync = off\n"
            + "".join(f"{name} = {value}\n" for name, value in floors.items())
        )
        (self.data / "pg_hba.conf").write_text(
            "local all all trust\nhost all all 127.0.0.1/32 trust\n"
        )
        (self.data / "pg_ident.conf").write_text("")
        if unprivileged_user("Postgres"):
            for path in ("postgresql.conf", "pg_hba.conf", "pg_ident.conf"):
                shutil.chown(self.data / path, user=unprivileged_user("Postgres"))

    def _ctl(self, *args: str) -> None:
        self._run(_tool("pg_ctl") or "pg_ctl", "-D", str(self.data), *args)

    def _run(self, *command: str) -> None:
        switch = unprivileged_user("Postgres")
        prefix = ["runuser", "-u", switch, "--"] if switch else []
        done = subprocess.run(
            [*prefix, *command], capture_output=True, text=True, timeout=START_SECONDS
        )
        if done.returncode:
            raise StandbyError(f"{' '.join(command)}: {done.stderr.strip()}\n{self.log()}")


class StandbyError(AssertionError):
    """A step of making or running the standby failed (its command's message)."""


def replication_refusal(error: StandbyError) -> str | None:
    """The reason to skip when ``error`` is the primary refusing replication connections."""
    if "no pg_hba.conf entry for replication" not in str(error):
        return None
    return (
        "the test database's Postgres refuses replication connections from 127.0.0.1, and "
        "these tests copy it with pg_basebackup: add 'host replication all 127.0.0.1/32 trust' "
        "(or your auth method) to its pg_hba.conf and reload it (.ci/run does)"
    )


def tools_missing() -> str | None:
    for name in ("pg_basebackup", "pg_ctl"):
        if _tool(name) is None:
            return f"these tests start a standby with Postgres's {name} (apt install postgresql)"
    return None


def _one(url: str, statement: str, params: tuple = ()) -> tuple:
    connection = psycopg2.connect(url, connect_timeout=5)
    connection.autocommit = True
    try:
        with connection.cursor() as cursor:
            cursor.execute(statement, params)
            return cursor.fetchone()
    finally:
        connection.close()
