"""Two ingest workers against one, on the shard uploads of one run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/parity_bench \\
        .venv/bin/python bench/shards_bench.py [--shards 40] [--cases 5000] [--rounds 3]

A run of ``--shards`` pytest-style shard reports (``tests/e2e/generate.py``), each holding its
own test files as CI's file-sharded jobs do, is posted at once through gunicorn and ingested by
Celery workers of one process each (prefork, concurrency 1) over Redis. The first run creates
the tests (timed, for information); then, in turns, a run with one worker and one with two, the
tests known in all, ``--rounds`` times: each figure is the best of its rounds (this machine's
speed drifts; in turns, a slow spell weighs on both). Both workers stay up and warm; the second
only stops taking tasks from the queue while one works alone. Each timing is from the first POST
until every upload is done; afterwards every run must hold exactly shards x cases results, one
per test.

Target (issue 11): two workers at least ``SPEEDUP_TARGET`` times as fast as one.
``DATABASE_URL``'s database is migrated and a ``bench-shards`` project is recreated in it.
"""

import argparse
import math
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_DIR))

from bench.live import (  # noqa: E402
    django_setup,
    live_stack,
    project_fresh,
    target_line,
    upload_post,
    upload_wait,
    warm_up,
    worker_consuming,
)

SPEEDUP_TARGET = 1.6


def shards_write(directory: Path, *, shards: int, cases: int) -> list[Path]:
    from tests.e2e.generate import junit_write

    paths = []
    for shard in range(shards):
        path = directory / f"shard-{shard:02d}.xml"
        classnames = tuple(f"test.shard{shard:02d}.test_part{part}.TestPart" for part in range(3))
        junit_write(path, cases=cases, classnames=classnames)
        paths.append(path)
    return paths


def run_timed(client, shards: list[Path], *, project: str, run: str) -> float:
    """Seconds from the first POST until every shard of ``run`` is done."""
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=8) as pool:
        ids = list(
            pool.map(lambda path: upload_post(client, path, project=project, run=run), shards)
        )
    for upload_id in ids:
        upload_wait(upload_id)
    return time.perf_counter() - started


def run_checked(project: str, run: str, *, expected: int) -> None:
    """Every result stored once: the run holds ``expected`` results, one per test."""
    from django.db.models import Count

    from parity.models import Result, Run

    run_id = Run.objects.get(project__slug=project, key=run).pk
    results = Result.objects.filter(run_id=run_id)
    doubled = results.values("test_id").annotate(n=Count("id")).filter(n__gt=1).count()
    stored = results.count()
    if stored != expected or doubled:
        raise SystemExit(f"run {run}: {stored} results for {expected}, {doubled} tests twice")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=40)
    parser.add_argument("--cases", type=int, default=5000, help="cases per shard")
    parser.add_argument("--rounds", type=int, default=3, help="best of this many rounds")
    args = parser.parse_args()
    django_setup()
    from tests.e2e.client import ApiClient

    expected = args.shards * args.cases
    project = project_fresh("bench-shards")
    one = two = math.inf
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        shards = shards_write(directory, shards=args.shards, cases=args.cases)
        with live_stack(directory / "stack", concurrency=1) as stack:
            client = ApiClient(base_url=stack.base_url, token=project.token)
            second = stack.start_worker()
            warm_up(client, directory, project=project.slug)
            worker_consuming(stack, second, consuming=False)
            first = run_timed(client, shards, project=project.slug, run="first")
            runs = ["first"]
            # One worker, then two, in turns: a slow spell of the machine then weighs on both.
            for number in range(args.rounds):
                runs.append(f"one-worker-{number}")
                one = min(one, run_timed(client, shards, project=project.slug, run=runs[-1]))
                worker_consuming(stack, second, consuming=True)
                runs.append(f"two-workers-{number}")
                two = min(two, run_timed(client, shards, project=project.slug, run=runs[-1]))
                worker_consuming(stack, second, consuming=False)
    for run in runs:
        run_checked(project.slug, run, expected=expected)
    print(f"{args.shards} shards x {args.cases:,} cases of one run ({expected:,} results a run)")
    print(f"  {'first run, 1 worker (tests new)':38} {first:12.2f} s")
    print(f"  {f'1 worker (best of {args.rounds})':38} {one:12.2f} s")
    print(f"  {f'2 workers (best of {args.rounds})':38} {two:12.2f} s")
    speedup = one / two
    met = speedup >= SPEEDUP_TARGET
    print(target_line("2 workers vs 1", f"{speedup:.2f}x", f">= {SPEEDUP_TARGET}x", met))
    print("  every run: all results stored, none twice")
    print(f"targets met: {int(met)} of 1")


if __name__ == "__main__":
    main()
