"""Pages and endpoints must not slow down with history: 10 days against a year of it.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python bench/history_bench.py [--days 10 365] [--tests 400] [--repeat 15]

For each history length a throwaway database gets a project shaped like PyTorch/XLA's (4
backends, every day 10 complete runs per backend on the default branch plus 2 pull-request
runs), scaled down in tests per run (``--tests``), never in runs. Each day's runs and their
results are written in bulk SQL (``bench/parity_endpoints.py``'s churning outcomes: gaps open
and close, so events, snapshots and reason counts pile up), then the engine recomputes the
day's last run of each backend, as completing it would. Results are kept for the whole year
(retention off), the worst case for the one page that reads them, a test's history.

Then the parity and gaps endpoints, the heatmap page, a test page and a skip reason's trend are
requested through Django's test client, the histories taking turns, and the median printed.
Target (issue 11): each at most ``RATIO_TARGET`` times as slow with a year as with 10 days.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import time
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parity.settings.test")

from bench.parity_endpoints import (  # noqa: E402
    BACKENDS,
    START,
    _db,
    run_write,
    setup_project,
    test_client_ready,
    use_database,
)

RUNS_A_DAY, PR_RUNS_A_DAY = 10, 2
RATIO_TARGET = 1.5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, nargs=2, default=[10, 365])
    parser.add_argument("--tests", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--keep", action="store_true", help="Keep the databases to inspect.")
    args = parser.parse_args()

    test_client_ready()
    built = {}
    try:
        for days in args.days:
            began = time.perf_counter()
            built[days] = build(days=days, tests=args.tests)
            print(f"{days} days built in {time.perf_counter() - began:.0f} s", flush=True)
        timings = time_round_robin(built, repeat=args.repeat)
    finally:
        for history in built.values() if not args.keep else ():
            use_database(history["database"])
            _db().creation.destroy_test_db(history["original"], verbosity=0)
    print_table(built, timings, tests=args.tests)


def build(*, days: int, tests: int) -> dict:
    db = _db()
    db.settings_dict["TEST"]["NAME"] = f"parity_history_{days}"
    original = db.creation.create_test_db(verbosity=0, autoclobber=True)
    project, token = setup_project(tests)
    project.visibility = "public"  # pages without a login
    project.save(update_fields=["visibility"])
    for day in range(days):
        history_day(project, day)
    with db.cursor() as cursor:
        counts = {}
        for table in ("parity_run", "parity_result", "parity_gapevent", "parity_snapshot"):
            cursor.execute(f"SELECT count(*) FROM {table}")  # noqa: S608 (fixed names)
            counts[table] = cursor.fetchone()[0]
        cursor.execute("ANALYZE")
    urls = page_urls(project)
    database = db.settings_dict["NAME"]
    use_database(original)
    return {"database": database, "original": original, "token": token, "urls": urls, **counts}


def history_day(project, day: int) -> None:
    """One day's runs with their results; the engine recomputes each backend's last one."""
    from parity.engine import parity_recompute

    backends = {b.name: b for b in project.backends.all()}
    last = []
    for index, name in enumerate(BACKENDS):
        for n in range(RUNS_A_DAY + PR_RUNS_A_DAY):
            pull_request = n >= RUNS_A_DAY
            run = run_write(
                project,
                backends[name],
                index=index,
                night=day * RUNS_A_DAY + n,
                key=f"{day}-{n}-{name}",
                commit=f"{day * 100 + n:040x}",
                branch=f"pr-{day}-{n}" if pull_request else "master",
                started=START + datetime.timedelta(days=day, hours=n * 2, minutes=index),
            )
            if n == RUNS_A_DAY - 1:
                last.append(run)
    for run in last:
        parity_recompute(run=run)


def page_urls(project) -> dict[str, str]:
    from parity.models import Reason, TestCase

    test = TestCase.objects.filter(project=project).order_by("id")[37]  # a skip on accelerators
    reason = Reason.objects.get(project=project, fingerprint="bench")
    api, page = f"/api/v1/projects/{project.slug}", f"/p/{project.slug}"
    return {
        "parity/": f"{api}/parity/",
        "gaps/": f"{api}/gaps/",
        "heatmap": f"{page}/",
        "test page": f"{page}/tests/{test.pk}/",
        "reason trend": f"{api}/skip-reasons/{reason.pk}/trend/",
    }


def time_round_robin(built: dict[int, dict], *, repeat: int) -> dict:
    """Median seconds per (history, page); histories take turns so that other load on the
    machine weighs on both alike."""
    from rest_framework.test import APIClient

    seconds: dict[tuple[int, str], list[float]] = {}
    for _ in range(repeat):
        for days, history in built.items():
            use_database(history["database"])
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=f"Token {history['token']}")
            for name, url in history["urls"].items():
                response = client.get(url)  # warm: connection, plans, caches
                assert response.status_code == 200, (url, response.status_code)
                began = time.perf_counter()
                client.get(url)
                seconds.setdefault((days, name), []).append(time.perf_counter() - began)
    return {key: statistics.median(values) for key, values in seconds.items()}


def print_table(built: dict[int, dict], timings: dict, *, tests: int) -> None:
    short, long = built
    print(
        f"{tests} tests a run x {len(BACKENDS)} backends, {RUNS_A_DAY + PR_RUNS_A_DAY} runs a day"
    )
    for days, history in built.items():
        print(
            f"  {days:>4} days: {history['parity_run']:,} runs, {history['parity_result']:,} "
            f"results, {history['parity_gapevent']:,} gap events, "
            f"{history['parity_snapshot']:,} snapshots"
        )
    met = 0
    names = list(built[short]["urls"])
    for name in names:
        a, b = timings[(short, name)], timings[(long, name)]
        ok = b / a <= RATIO_TARGET
        met += ok
        print(
            f"  {name:14} {a * 1000:8.1f} ms {b * 1000:8.1f} ms  {b / a:5.2f}x   "
            f"target <= {RATIO_TARGET}x  {'met' if ok else 'NOT MET'}"
        )
    print(f"targets met: {met} of {len(names)}")


if __name__ == "__main__":
    main()
