"""The laptop path holds a bounded number of database connections (docs/operations.md).

``make serve`` and ``make demo`` serve with ``manage.py runserver`` and the local settings
against the embedded Postgres (DATABASE_URL unset), which has Postgres' default
``max_connections`` of 100. runserver starts a thread per request; a connection kept past its
thread lingers until garbage collection, so a burst of CI uploads used to take every connection
and answer 500. Here the same instance, in a directory of the test's own (its own embedded
Postgres: the shared server's connections are never touched), takes 300 uploads as fast as
eight CI jobs send them, and then a request meets a Postgres with no connection left.
"""

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import psycopg2
import pytest

from parity.embedded_db import EMBEDDED_DB_NAME, embedded_database_stop
from tests.e2e.client import ApiClient, Reply
from tests.e2e.generate import Written, junit_write
from tests.e2e.redis_server import free_port
from tests.e2e.stack import StackError, wait_for

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
UPLOADS = 300
MALFORMED_EVERY = 10  # one upload in ten is not well-formed XML: a clean refusal, never a 5xx
CI_JOBS = 8  # uploads in flight at once
# Postgres' default, and the embedded one's: the limit users hit.
MAX_CONNECTIONS = 100


@dataclass
class Laptop:
    """``make serve``: runserver, the local settings, the embedded Postgres, no broker."""

    directory: Path
    api: ApiClient
    server: subprocess.Popen
    log: Path

    @property
    def pgdata(self) -> Path:
        return self.directory / "var" / "pgdata"

    def connect(self):
        return psycopg2.connect(host=str(self.pgdata), dbname=EMBEDDED_DB_NAME, user="postgres")


def _env(directory: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL"}
    }
    return {
        **env,
        "DJANGO_SETTINGS_MODULE": "parity.settings.local",
        "PARITY_VAR_DIR": str(directory / "var"),
        "PARITY_ENV_FILE": str(directory / "no.env"),  # the checkout's .env is not this laptop's
        "PYTHONUNBUFFERED": "1",
    }


def _manage(directory: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=_env(directory),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"manage.py {' '.join(args)}:\n{done.stderr[-5000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def laptop(tmp_path_factory) -> Iterator[Laptop]:
    directory = tmp_path_factory.mktemp("laptop")
    log = directory / "runserver.log"
    server = None
    try:
        _manage(directory, "migrate", "--noinput")
        _manage(directory, "create_project", "demo", "--backends", "cpu,tpu", "--reference", "cpu")
        token = _manage(directory, "create_upload_token", "demo").strip()
        port = free_port()
        with log.open("ab") as out:
            # --noreload: the autoreloader only adds a parent process; requests are served the
            # same, a thread each.
            server = subprocess.Popen(
                [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
                cwd=ROOT,
                env=_env(directory),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        api = ApiClient(base_url=f"http://127.0.0.1:{port}", token=token)
        laptop = Laptop(directory=directory, api=api, server=server, log=log)
        wait_for(lambda: _answers(laptop), seconds=60, what=f"runserver on port {port}")
        assert _max_connections(laptop) == MAX_CONNECTIONS
        yield laptop
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=20)
        embedded_database_stop(directory / "var" / "pgdata")


def _max_connections(laptop: Laptop) -> int:
    probe = laptop.connect()
    try:
        with probe.cursor() as cursor:
            cursor.execute("SHOW max_connections")
            return int(cursor.fetchone()[0])
    finally:
        probe.close()


def _answers(laptop: Laptop) -> bool:
    if laptop.server.poll() is not None:
        raise StackError(f"runserver exited:\n{laptop.log.read_text()[-5000:]}")
    try:
        return laptop.api.request("GET", "/admin/login/").status == 200
    except OSError:
        return False


def _files(directory: Path) -> list[tuple[Written | None, tuple[str, bytes]]]:
    """Each upload's file, with what it holds (None: not well-formed)."""
    files = []
    for number in range(UPLOADS):
        if number % MALFORMED_EVERY == 0:
            broken = f'<testsuite name="s{number}"><testcase name="t{number}">'.encode()
            files.append((None, (f"broken{number}.xml", broken)))
            continue
        written = junit_write(directory / f"u{number}.xml", cases=20, prefix=f"u{number}_")
        files.append((written, (written.path.name, written.path.read_bytes())))
    return files


class ConnectionCount:
    """The most client connections Postgres held at once while it ran (one is its own)."""

    def __init__(self, laptop: Laptop) -> None:
        self.laptop = laptop
        self.most = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._sample)

    def _sample(self) -> None:
        with self.laptop.connect() as probe, probe.cursor() as cursor:
            probe.autocommit = True
            while not self.stop.wait(0.05):
                cursor.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"
                )
                self.most = max(self.most, cursor.fetchone()[0])

    def __enter__(self) -> "ConnectionCount":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()


def test_a_burst_of_uploads_to_runserver_is_stored_without_a_5xx(laptop, tmp_path):
    files = _files(tmp_path)

    def post(item: tuple[int, tuple[Written | None, tuple[str, bytes]]]) -> Reply:
        number, (_written, file) = item
        return laptop.api.post_upload(file, project="demo", run=f"replay-{number % 10}")

    started = time.monotonic()
    with ConnectionCount(laptop) as connections, ThreadPoolExecutor(CI_JOBS) as pool:
        replies = list(pool.map(post, enumerate(files)))
    seconds = time.monotonic() - started

    assert [str(r) for r in replies if r.status >= 500] == []
    for (written, _file), reply in zip(files, replies, strict=True):
        assert reply.status == 202, str(reply)
        body = laptop.api.upload(reply.body["id"]).body
        if written is None:
            assert body["status"] == "failed" and body["error"], body
        else:
            assert (body["status"], body["counts"]) == ("done", written.expected_counts()), body
    # Each request gives its connection back: about one per upload in flight (a thread closes
    # its connection after its answer is sent, and a backend exits a moment after that).
    assert connections.most <= 2 * CI_JOBS
    print(f"{UPLOADS} uploads in {seconds:.0f} s, at most {connections.most} connections")


def test_with_every_connection_taken_requests_answer_503_with_retry_after(laptop, tmp_path):
    held = []
    try:
        while True:  # as many as Postgres gives: every other client is now refused
            try:
                held.append(laptop.connect())
            except psycopg2.OperationalError as exc:
                assert "too many clients" in str(exc)
                break
        assert len(held) <= MAX_CONNECTIONS
        upload = laptop.api.post_upload(("full.xml", b"<testsuite/>"), project="demo")
        page = laptop.api.request("GET", "/")
    finally:
        for connection in held:
            connection.close()

    for reply in (upload, page):
        assert reply.status == 503, str(reply)
        assert reply.headers.get("Retry-After", "").isdigit(), reply.headers
    assert "send the request again" in upload.body["detail"].lower()
    again = laptop.api.post_upload(("full.xml", b"<testsuite/>"), project="demo")
    assert again.status == 202, str(again)
