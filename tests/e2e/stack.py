"""The running system as production runs it: gunicorn serving ``parity.wsgi`` and a prefork Celery
worker over Redis, both against the test database, started as subprocesses the tests can kill.

Each process leads its own process group, so killing a group reaches a worker's pool children
and nothing this module did not start. Every process logs to a file under ``directory``; tests
print the part written during a failing test.

With ``hosts_apart`` each process runs as on a host of its own: its own working directory,
``MEDIA_ROOT`` and ``TMPDIR``, so they share only Postgres, Redis and what
``extra_env`` names (a bucket, tests/object_storage.py).
"""

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.error import HTTPError, URLError
from urllib.request import urlopen

import redis
from celery import Celery
from kombu.exceptions import OperationalError

WEB_APPLICATION_NAME = "parity-e2e-web"
WORKER_APPLICATION_NAME = "parity-e2e-worker"
START_SECONDS = 60
STOP_SECONDS = 20
# Worker options of the shared stack: no heartbeats, gossip or mingle between the stacks of
# concurrent test runs. A stack that must behave as docker/compose.yml's worker does passes ().
QUIET_WORKER = ("--without-heartbeat", "--without-gossip", "--without-mingle")
# Access-log lines of the tests' status polling, left out of the logs shown for a failure.
_POLL = re.compile(r'"GET /api/v1/uploads/\d+/ HTTP/1\.1" 200 ')


REPOSITORY = Path(__file__).resolve().parents[2]


def _host_env(directory: Path) -> dict[str, str]:
    """A process's own disk: what it writes lands under ``directory`` and nowhere shared."""
    for sub in ("media", "tmp"):
        (directory / sub).mkdir(parents=True, exist_ok=True)
    # Its working directory is not the checkout: parity is imported from the checkout by path,
    # as from an image's installed code.
    paths = [str(REPOSITORY), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {
        "PARITY_MEDIA_ROOT": str(directory / "media"),
        "TMPDIR": str(directory / "tmp"),
        "PYTHONPATH": os.pathsep.join(paths),
    }


class StackError(AssertionError):
    """A process of the stack did not start, or died when it should not have."""


def wait_for(check: Callable[[], bool], *, seconds: float, what: str) -> None:
    """Poll ``check`` until it holds; fail naming ``what`` once ``seconds`` have passed."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise StackError(f"{what}: not within {seconds:.0f} s")
        time.sleep(0.2)


@dataclass
class Process:
    name: str
    popen: subprocess.Popen
    log: Path
    nodename: str = ""  # a worker's Celery node name
    queue: str = ""  # the queue a worker consumes

    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        """SIGKILL the whole process group (a worker's pool children too), then reap it."""
        if self.alive():
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.stop()

    def stop(self) -> None:
        """SIGTERM to the main process (a warm shutdown: it winds its children down), then
        SIGKILL to whatever of its group is left after ``STOP_SECONDS``."""
        if self.alive():
            self.popen.terminate()
        try:
            self.popen.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait(timeout=STOP_SECONDS)
        # Pool children of a SIGKILLed worker are orphans in the same group; reach them too.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        # A signal is delivered asynchronously: a child in the middle of a write to disk or
        # the database dies a moment later, when that call returns.
        wait_for(lambda: not self.group_pids(), seconds=STOP_SECONDS, what=f"{self.name} to exit")

    def group_pids(self) -> list[int]:
        """PIDs of this process group still running (the worker and its pool children)."""
        pids = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # Fields after the parenthesized command: state, ppid, pgrp, ...
            state, _ppid, pgrp = stat.rsplit(")", 1)[1].split()[:3]
            if int(pgrp) == self.popen.pid and state != "Z":
                pids.append(int(entry.name))
        return pids


@dataclass
class LiveStack:
    directory: Path
    database_url: str  # the test database, without options
    redis_url: str
    queue: str
    extra_env: dict[str, str] = field(default_factory=dict)
    concurrency: int = 2  # prefork children of each worker
    worker_options: tuple[str, ...] = QUIET_WORKER
    worker_count: int = 1  # workers started with the stack, on one queue
    hosts_apart: bool = False
    web: Process | None = None
    workers: list[Process] = field(default_factory=list)
    base_url: str = ""
    celery: Celery | None = None
    _log_marks: dict[Path, int] = field(default_factory=dict)

    @property
    def media_root(self) -> Path:
        return self.directory / "media"

    @property
    def worker(self) -> Process:
        return self.workers[-1]

    def running_workers(self) -> list[Process]:
        return [w for w in self.workers if w.alive()]

    def host_directory(self, name: str) -> Path:
        """The working directory of the process ``name`` when hosts are apart."""
        return self.directory / f"host-{name}"

    def env(self, application_name: str) -> dict[str, str]:
        return {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "parity.settings.test",
            "DATABASE_URL": f"{self.database_url}?application_name={application_name}",
            "CELERY_BROKER_URL": self.redis_url,
            "CELERY_TASK_DEFAULT_QUEUE": self.queue,
            "PARITY_MEDIA_ROOT": str(self.media_root),
            "PYTHONUNBUFFERED": "1",
            **self.extra_env,
        }

    def start(self) -> None:
        self.media_root.mkdir(parents=True, exist_ok=True)
        # Not the current app: shared tasks (upload_ingest.delay) of later tests would send here.
        self.celery = Celery("parity-e2e", broker=self.redis_url, set_as_current=False)
        self.celery.conf.task_default_queue = self.queue
        self.start_web()
        for _ in range(self.worker_count):
            self.start_worker()

    def start_web(self) -> None:
        # The test binds port 0 and hands gunicorn the listening socket: the OS picks the port
        # and no other process can take it between choosing and binding.
        listener = socket.create_server(("127.0.0.1", 0), backlog=256)
        port = listener.getsockname()[1]
        command = [
            *(sys.executable, "-m", "gunicorn", "parity.wsgi:application"),
            *("--bind", f"fd://{listener.fileno()}"),
            *("--workers", "2", "--worker-class", "gthread", "--threads", "4"),
            *("--timeout", "120", "--graceful-timeout", "5"),
            *("--access-logfile", "-", "--error-logfile", "-", "--log-level", "info"),
        ]
        try:
            self.web = self._spawn("web", command, WEB_APPLICATION_NAME, fds=(listener.fileno(),))
        finally:
            listener.close()
        self.base_url = f"http://127.0.0.1:{port}"
        wait_for(self._web_answers, seconds=START_SECONDS, what=f"gunicorn on {self.base_url}")

    def start_worker(self, queue: str = "") -> Process:
        """A worker on the stack's queue, or on ``queue`` (one the stack's settings route some
        tasks to, as ``PARITY_QUEUE_WEBHOOKS`` does)."""
        queue = queue or self.queue
        number = len(self.workers) + 1
        nodename = f"worker{number}-{queue}@e2e"
        command = [
            *(sys.executable, "-m", "celery", "-A", "parity", "worker"),
            *("--pool=prefork", f"--concurrency={self.concurrency}", "-Q", queue),
            *("-n", nodename),
            *self.worker_options,
            "--loglevel=INFO",
        ]
        worker = self._spawn(f"worker{number}", command, WORKER_APPLICATION_NAME)
        worker.nodename, worker.queue = nodename, queue
        self.workers.append(worker)
        wait_for(
            lambda: self._worker_answers(worker, nodename),
            seconds=START_SECONDS,
            what=f"celery worker {nodename} answering ping",
        )
        return worker

    def stop_worker(self) -> None:
        """A warm shutdown (SIGTERM): the worker finishes what it runs, then exits."""
        self.worker.stop()

    def restart_worker(self) -> None:
        """Fresh workers (as many as ran, at least one) on an empty queue: whatever the old ones
        ran or held is dropped."""
        running = self.running_workers() or [self.worker]
        for worker in running:
            worker.kill()
        self.queue_purge()
        for worker in running:
            self.start_worker(worker.queue)

    def worker_idle(self) -> bool:
        """Nothing waits in the queue and the workers run, hold and schedule no task."""
        client = redis.Redis.from_url(self.redis_url)
        if any(client.llen(queue) for queue in (self.queue, *self._other_queues())):
            return False
        nodenames = [w.nodename for w in self.running_workers()]
        inspect = self.celery.control.inspect(destination=nodenames, timeout=1.0)
        for tasks in (inspect.active(), inspect.reserved(), inspect.scheduled()):
            if tasks is None or any(tasks.values()):
                return False
        return True

    def settle(self, *, seconds: float = 60) -> None:
        """Wait until the worker is idle (seen twice in a row); restart it if it will not be.
        Before pytest-django empties the tables: a task still writing would deadlock with it."""
        deadline = time.monotonic() + seconds
        idle_checks = 0
        while idle_checks < 2 and time.monotonic() < deadline:
            idle_checks = idle_checks + 1 if self.worker.alive() and self._idle() else 0
            time.sleep(0.2)
        if idle_checks < 2:
            self.restart_worker()

    def _idle(self) -> bool:
        # A test that restarted Redis leaves this process' pooled broker connections dead: the
        # first use of one fails, and the next takes a fresh one.
        try:
            return self.worker_idle()
        except (redis.RedisError, OperationalError, OSError):
            return False

    def assert_worker_alive(self) -> None:
        if not self.worker.alive():
            raise StackError(f"{self.worker.name} exited with {self.worker.popen.returncode}")

    def send_task(self, name: str) -> None:
        self.celery.send_task(name, queue=self.queue)

    def queue_purge(self) -> None:
        """Drop every message waiting in this stack's queues (Redis keeps a queue as a list)."""
        redis.Redis.from_url(self.redis_url).delete(self.queue, *self._other_queues())

    def _other_queues(self) -> set[str]:
        return {w.queue for w in self.workers if w.queue and w.queue != self.queue}

    def queue_forget(self) -> None:
        """Leave nothing of this queue in Redis: its bindings, and the unacknowledged messages
        a killed worker left (kombu keeps them in one hash per database, with their queue)."""
        client = redis.Redis.from_url(self.redis_url)
        queues = {self.queue, *self._other_queues()}
        for queue in queues:
            client.delete(queue, f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")
        for tag, value in client.hscan_iter("unacked"):
            _message, _exchange, routing_key = json.loads(value)
            if routing_key in queues:
                client.hdel("unacked", tag)
                client.zrem("unacked_index", tag)

    def close(self) -> None:
        for process in self._processes():
            process.stop()
        self.queue_forget()
        if self.celery is not None:
            self.celery.close()

    def mark_logs(self) -> None:
        self._log_marks = {p.log: p.log.stat().st_size for p in self._processes()}

    def logs_since_mark(self, limit: int = 20_000) -> list[tuple[str, str]]:
        sections = []
        for process in self._processes():
            lines = self.log_since_mark(process).splitlines(keepends=True)
            text = "".join(line for line in lines if not _POLL.search(line))
            if text:
                sections.append((f"{process.name} log ({process.log})", text[-limit:]))
        return sections

    def log_since_mark(self, process: Process) -> str:
        with process.log.open("rb") as log:
            log.seek(self._log_marks.get(process.log, 0))
            return log.read().decode(errors="replace")

    def _processes(self) -> list[Process]:
        return [p for p in [self.web, *self.workers] if p is not None]

    def _spawn(
        self, name: str, command: list[str], application_name: str, fds: tuple[int, ...] = ()
    ) -> Process:
        log = self.directory / f"{name}.log"
        env, cwd = self.env(application_name), REPOSITORY
        if self.hosts_apart:
            cwd = self.host_directory(name)
            env.update(_host_env(cwd))
        with log.open("ab") as out:
            popen = subprocess.Popen(
                command,
                env=env,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                pass_fds=fds,
                start_new_session=True,  # its own process group, killed as one
            )
        return Process(name=name, popen=popen, log=log)

    def _web_answers(self) -> bool:
        if not self.web.alive():
            raise StackError(f"gunicorn exited:\n{self.web.log.read_text()[-5000:]}")
        try:
            with urlopen(f"{self.base_url}/admin/login/", timeout=2) as response:
                return response.status == 200
        except HTTPError as exc:
            raise StackError(f"gunicorn answered {exc.code}:\n{self.web.log.read_text()}") from exc
        except (URLError, OSError):
            return False

    def _worker_answers(self, worker: Process, nodename: str) -> bool:
        if not worker.alive():
            raise StackError(f"{worker.name} exited:\n{worker.log.read_text()[-5000:]}")
        try:
            replies = self.celery.control.ping(destination=[nodename], timeout=1.0)
        except (redis.RedisError, OperationalError, OSError):
            return False  # a pooled connection that a Redis restart left dead; the next is fresh
        return any(nodename in reply for reply in replies)
