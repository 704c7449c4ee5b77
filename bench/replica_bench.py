"""What the read replica costs a page, and how soon a write reaches it.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python bench/replica_bench.py [--rounds 2000]

Starts a streaming standby of DATABASE_URL's Postgres as the live test does
(``tests/e2e/standby.py``: ``pg_basebackup``, then ``pg_ctl`` on a free port; the server must
allow replication connections from 127.0.0.1) and prints, each as median and p95 of
``--rounds``:

- the replica middleware's check of a page read (``parity.read_replica._STATE_SQL``), on an
  open connection to the standby: what every page read on the replica pays first;
- ``pg_current_wal_insert_lsn()`` on the primary: what a POST from a browser pays to set its cookie;
- a commit on the primary until the standby has replayed it, polled in a tight loop: how soon a
  writer's pages go back to the replica on an idle pair.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import psycopg2

REPO_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parity.settings.test")

from parity.read_replica import _STATE_SQL  # noqa: E402
from tests.e2e.standby import OwnedStandby  # noqa: E402


def _connect(url: str):
    connection = psycopg2.connect(url)
    connection.autocommit = True
    return connection.cursor()


def _timed(rounds: int, step) -> list[float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1000)
    return times


def _line(label: str, times: list[float]) -> str:
    p95 = statistics.quantiles(times, n=20)[-1]
    return f"{label:<44} median {statistics.median(times):7.3f} ms   p95 {p95:7.3f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2000)
    rounds = parser.parse_args().rounds
    url = urlsplit(os.environ["DATABASE_URL"])
    standby = OwnedStandby(primary=(url.hostname, url.port or 5432), user=url.username)
    standby.start()
    try:
        replica = _connect(f"postgres://{url.username}@127.0.0.1:{standby.port}/postgres")
        primary = _connect(f"postgres://{url.username}@{url.hostname}:{url.port or 5432}/postgres")

        def check() -> None:
            replica.execute(_STATE_SQL, {"wrote": None})
            replica.fetchone()

        def position() -> None:
            primary.execute("SELECT pg_current_wal_insert_lsn()")
            primary.fetchone()

        def replayed() -> None:
            # A transaction that wrote WAL (a message), so its commit is flushed and streamed.
            primary.execute("SELECT pg_logical_emit_message(true, 'parity', 'replica bench')")
            primary.execute("SELECT pg_current_wal_insert_lsn()")
            wrote = primary.fetchone()[0]
            while True:
                replica.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (wrote,))
                if replica.fetchone()[0]:
                    return
                time.sleep(0.0002)

        print(_line("replica check of a page read", _timed(rounds, check)))
        print(_line("primary WAL position after a POST", _timed(rounds, position)))
        print(_line("commit on the primary until replayed", _timed(rounds // 10, replayed)))
    finally:
        standby.remove()


if __name__ == "__main__":
    main()
