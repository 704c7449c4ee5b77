"""Where a recompute's time goes: each statement's Postgres CPU in the bench's three recomputes.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/recompute \\
        .venv/bin/python bench/recompute_statements.py [--rounds 5] [--min 0.004]

Uses ``bench/recompute_bench.py``'s 100k project (built on the first run). Each round runs the
three recomputes in one transaction that is rolled back, as that bench does, with an
``execute_wrapper`` reading the Postgres backend's CPU from ``/proc`` around each statement
(it counts clock ticks: a figure under one tick is a tick or none, so several rounds are
averaged). A statement is known by its text and its occurrence in the recompute (the first
round also loads the run's project and backend, which shifts positions). Printed per
recompute: its best total, then each statement's mean CPU and best wall clock, in the order
they ran.
"""

import argparse
import re
import sys
import time
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent
if str(REPO_DIR) not in sys.path:
    sys.path.insert(0, str(REPO_DIR))

from bench.live import django_setup  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--min", type=float, default=0.004, help="CPU seconds shown from")
    args = parser.parse_args()
    django_setup()
    from django.db import connection, transaction

    from bench.recompute_bench import ROLLED_BACK, SIZES, _process_cpu, project_build
    from parity.engine import parity_recompute

    built = project_build("100k", SIZES["100k"], fresh=False)
    figures, order, totals = {}, {}, {}
    for _ in range(args.rounds):
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                pid = cursor.fetchone()[0]
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            for name, run in built.runs.items():
                rows = []

                def timed(execute, statement, params, many, context, rows=rows, pid=pid):
                    cpu, wall = _process_cpu(pid), time.perf_counter()
                    try:
                        return execute(statement, params, many, context)
                    finally:
                        text = getattr(statement, "as_string", None)
                        text = text(connection.connection) if text else str(statement)
                        rows.append((text, _process_cpu(pid) - cpu, time.perf_counter() - wall))

                began = _process_cpu(pid)
                with connection.execute_wrapper(timed):
                    parity_recompute(run=run)
                totals[name] = min(totals.get(name, float("inf")), _process_cpu(pid) - began)
                seen = {}
                for position, (text, cpu, wall) in enumerate(rows):
                    label = re.sub(r"\s+", " ", text).strip()[:100]
                    seen[label] = seen.get(label, 0) + 1
                    key = (name, label, seen[label])
                    order.setdefault(key, position)
                    mean, best = figures.get(key, (0.0, float("inf")))
                    figures[key] = (mean + cpu / args.rounds, min(best, wall))
            transaction.set_rollback(True)
        with connection.cursor() as cursor:
            for table in ROLLED_BACK:
                cursor.execute(f"VACUUM ANALYZE parity_{table}")
    for name in built.runs:
        print(f"{name}: {totals[name]:.3f} s of Postgres CPU (best round); per statement:")
        for key in sorted((k for k in figures if k[0] == name), key=order.get):
            cpu, wall = figures[key]
            if cpu >= args.min:
                print(f"  {cpu:6.3f} cpu {wall:6.3f} wall  {key[1]}")


if __name__ == "__main__":
    main()
