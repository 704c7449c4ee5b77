"""A Redis server a test owns: started on a free port as a subprocess, stopped and started
again by the test (the shared Redis on 6379 is never touched). It keeps its data across a
restart the way docker/compose.yml's Redis does (an append-only file, written at shutdown),
so a restart loses no queued or unacknowledged message; ``stop`` is a SIGTERM, as
``docker compose restart redis`` sends."""

import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis

START_SECONDS = 10


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class OwnedRedis:
    directory: Path
    port: int = field(default_factory=free_port)
    popen: subprocess.Popen | None = None
    restarts: int = 0

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        command = [
            *("redis-server", "--port", str(self.port), "--bind", "127.0.0.1"),
            *("--dir", str(self.directory), "--save", "", "--daemonize", "no"),
            *("--appendonly", "yes", "--appendfsync", "always"),
        ]
        with (self.directory / "redis.log").open("ab") as log:
            self.popen = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + START_SECONDS
        while not self.answers():
            if self.popen.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"redis-server on port {self.port} did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.popen is not None and self.popen.poll() is None:
            self.popen.terminate()
            self.popen.wait(timeout=START_SECONDS)
        self.popen = None

    def restart(self, *, down_seconds: float = 0.0) -> None:
        self.stop()
        time.sleep(down_seconds)
        self.start()
        self.restarts += 1

    def answers(self) -> bool:
        try:
            return bool(redis.Redis(port=self.port, socket_connect_timeout=0.2).ping())
        except redis.RedisError:
            return False
