"""bench/storage_bench.py at a tiny size: it runs through the real write path and prints every
table it names, the WAL it measured and its extrapolation, so docs/operations.md's figures can
be measured again."""

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg2
from psycopg2 import sql

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.storage_bench import NAMED, PER_DAY  # noqa: E402


def _drop(url: str, name: str) -> None:
    conn = psycopg2.connect(urlunsplit(urlsplit(url)._replace(path="/postgres")))
    conn.autocommit = True
    try:
        with conn.cursor() as cursor:
            cursor.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
    finally:
        conn.close()


def test_storage_bench_prints_every_table_and_wal():
    url = os.environ["DATABASE_URL"]
    base = f"storage_smoke_{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "DATABASE_URL": urlunsplit(urlsplit(url)._replace(path="/" + base))}
    env.pop("CELERY_BROKER_URL", None)
    try:
        done = subprocess.run(
            [sys.executable, "bench/storage_bench.py", "--results", "3000", "--nights", "3"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        _drop(url, base + "_storage")
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    rows = {
        m["table"]: int(m["rows"].replace(",", ""))
        for m in re.finditer(r"^(?P<table>\w+)\s+(?P<rows>[\d,]+)\s+[\d,.-]+\s", out, re.M)
    }
    assert set(NAMED) <= set(rows), f"missing {set(NAMED) - set(rows)}:\n{out}"
    for table in ("result", "testcase", "run", "upload", "runfile", "currentoutcome", "gap"):
        assert rows[table] > 0, f"{table} has no rows:\n{out}"
    # One run a backend a night, every run through the API.
    assert rows["run"] == rows["upload"] == 4 * 4
    assert "result_run_test" in out  # each index, not only each table
    for label in (
        "night's ingest",
        "CHECKPOINT, wal_compression off",
        "compression lz4",
        "retention's",
    ):
        line = next(line for line in out.splitlines() if label in line)
        assert re.search(r"[1-9][\d,]* B a row", line), line
    assert "dropping a table of" in out
    assert "Extrapolation (not measured)" in out
    for per_day in PER_DAY:
        assert re.search(rf"^\s+{per_day:,}\s", out, re.M), f"{per_day:,} a day not printed"
