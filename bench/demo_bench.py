"""`make demo`'s load: `manage.py load_demo` on a fresh database, timed.

Each round drops and creates the database DATABASE_URL names, migrates it (not timed) and loads
the demo in a new process, as `make demo` does after `make migrate`: 252 uploads through the
upload API, each ingested at once (Celery eager, no broker) and each completed run recomputed.
It prints the process's wall time and the CPU seconds of its Python process, of the process
that makes the demo's files meanwhile (``parity.demo.ahead``), and of its Postgres backend,
with the load average, and what the demo holds (results, open gaps per backend, snapshots, and
a digest of the open gaps and snapshot counts), which must not change with the code.

With ``--against DIR`` (another checkout, main's for instance, with its own ``.venv``) the
rounds alternate between the two, so that both see the same minutes of a shared machine. With
``--embedded``, `make demo`'s own path: DATABASE_URL unset, a fresh embedded Postgres in a
scratch folder (initdb and migrate not timed), stopped after each round.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/demo_bench \\
        .venv/bin/python bench/demo_bench.py [--rounds 3] [--against ../main] [--embedded]

The database DATABASE_URL names is dropped: name a scratch one.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import dj_database_url
import psycopg2

HERE = Path(__file__).resolve().parent.parent
TARGET_SECONDS = 15.0

# Run in the checkout measured, with its own code: the load, then what the demo holds.
_DRIVER = r"""
import io, json, os, resource, sys, time
started = time.perf_counter()
sys.path.insert(0, os.getcwd())
import django
django.setup()
from django.core.management import call_command
from django.db import connection

def backend_cpu(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

with connection.cursor() as cursor:
    cursor.execute("SELECT pg_backend_pid()")
    pid = cursor.fetchone()[0]
postgres_before = backend_cpu(pid)
call_command("load_demo", stdout=io.StringIO())
wall = time.perf_counter() - started
postgres = backend_cpu(pid) - postgres_before
own = resource.getrusage(resource.RUSAGE_SELF)
children = resource.getrusage(resource.RUSAGE_CHILDREN)  # the process making the files
with connection.cursor() as cursor:
    cursor.execute('''
        SELECT (SELECT count(*) FROM parity_result),
               (SELECT count(*) FROM parity_snapshot),
               (SELECT json_object_agg(name, n) FROM (
                   SELECT b.name, count(*) AS n FROM parity_gap g
                   JOIN parity_backend b ON b.id = g.backend_id WHERE g.is_open GROUP BY b.name) o),
               (SELECT md5(string_agg(x, '|' ORDER BY x)) FROM (
                   SELECT concat_ws(' ', b.name, t.key, g.state, g.tracked, g.intended) AS x
                   FROM parity_gap g JOIN parity_backend b ON b.id = g.backend_id
                   JOIN parity_testcase t ON t.id = g.test_id WHERE g.is_open
                   UNION ALL
                   SELECT concat_ws(' ', b.name, s.at::date, s.passing, s.skipped, s.failed,
                                    s.missing, s.tracked, s.untracked, s.test_count)
                   FROM parity_snapshot s JOIN parity_backend b ON b.id = s.backend_id) d)
    ''')
    results, snapshots, open_gaps, digest = cursor.fetchone()
print(json.dumps({
    "wall": wall,
    "python": own.ru_utime + own.ru_stime,
    "maker": children.ru_utime + children.ru_stime,
    "postgres": postgres,
    "load": os.getloadavg()[0],
    "results": results, "snapshots": snapshots, "open_gaps": open_gaps, "digest": digest,
}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another checkout, loaded in turn")
    parser.add_argument("--embedded", action="store_true", help="make demo's embedded Postgres")
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if not args.embedded and not url:
        parser.error("set DATABASE_URL to a scratch database (it is dropped), or pass --embedded")
    checkouts = {"this": HERE}
    if args.against:
        checkouts["against"] = args.against.resolve()
    rows: dict[str, list[dict]] = {label: [] for label in checkouts}
    for round_number in range(1, args.rounds + 1):
        for label, checkout in checkouts.items():
            row = _round(checkout, url=url, embedded=args.embedded)
            rows[label].append(row)
            print(f"round {round_number} {label:7s} {_line(row)}", flush=True)
    print()
    for label, runs in rows.items():
        best = min(run["wall"] for run in runs)
        median = {key: statistics.median(run[key] for run in runs) for key in _FIGURES}
        print(
            f"{label:7s} median {_line(median)}; best wall {best:.1f} s "
            f"(target {TARGET_SECONDS:.0f} s: {'met' if best < TARGET_SECONDS else 'not met'})"
        )
    digests = {run["digest"] for runs in rows.values() for run in runs}
    print("content: the same in every round" if len(digests) == 1 else "content DIFFERS")
    return 0 if len(digests) == 1 else 1


_FIGURES = ("wall", "python", "maker", "postgres", "load")


def _line(row: dict) -> str:
    line = (
        f"wall {row['wall']:5.1f} s | cpu: python {row['python']:.2f} s, "
        f"files {row['maker']:.2f} s, postgres {row['postgres']:.2f} s | load {row['load']:.2f}"
    )
    if "results" in row:
        line += f" | {row['results']} results, {row['snapshots']} snapshots"
        line += f", open gaps {row['open_gaps']}"
    return line


def _round(checkout: Path, *, url: str, embedded: bool) -> dict:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "parity.settings.local"}
    scratch = Path(tempfile.mkdtemp(prefix="demo_bench_"))
    env["PARITY_VAR_DIR"] = str(scratch)  # uploaded files (and the embedded Postgres) go here
    if embedded:
        env.pop("DATABASE_URL", None)
    else:
        _database_recreate(url)
    python = str(checkout / ".venv" / "bin" / "python")
    try:
        _run([python, "manage.py", "migrate", "--noinput"], checkout, env)
        output = _run([python, "-c", _DRIVER], checkout, env)
        return json.loads(output.strip().splitlines()[-1])
    finally:
        if embedded:
            _run([python, "-m", "parity.embedded_db", "stop"], checkout, env)
        shutil.rmtree(scratch, ignore_errors=True)


def _run(command: list[str], cwd: Path, env: dict) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{' '.join(command[1:3])} failed in {cwd}:\n{done.stdout}{done.stderr}")
    return done.stdout


def _database_recreate(url: str) -> None:
    settings = dj_database_url.parse(url)
    connection = psycopg2.connect(
        dbname="postgres",
        user=settings["USER"],
        password=settings["PASSWORD"],
        host=settings["HOST"],
        port=settings["PORT"] or None,
    )
    connection.autocommit = True
    name = psycopg2.extensions.quote_ident(settings["NAME"], connection)
    with connection.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        cursor.execute(f"CREATE DATABASE {name}")
    connection.close()


if __name__ == "__main__":
    sys.exit(main())
