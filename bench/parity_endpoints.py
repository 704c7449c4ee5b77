"""The parity and gaps endpoints answer from roll-up tables: their time must not grow with
history. This builds the same project with short and long histories and times both.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python bench/parity_endpoints.py [--runs 10 200] [--tests 2000] [--repeat 30]

For each history length it creates a throwaway database, a project with 4 backends and
``--tests`` tests, then ``--runs`` nightly runs per backend whose results are written in bulk
SQL (no XML: ingest is benchmarked elsewhere). Outcomes are synthetic but churn like CI does:
each night some tests fail once on each accelerator, so gaps open and close and closed gaps,
events, snapshots and reason counts pile up with history. Every run goes through the engine
(``parity_recompute``) as it would when it completes. Then each endpoint is called through the
full DRF stack ``--repeat`` times (each after a warm-up call), the histories taking turns so
that other load on the machine weighs on all alike, and the median time printed with the
number of queries per request (2 of them authenticate the token).
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

BACKENDS = ("cpu", "gpu", "tpu", "neuron")
START = datetime.datetime(2025, 1, 1, 2, tzinfo=datetime.UTC)

# Outcomes of test k (0-based) on backend b (0 = cpu, the reference) in run i, as SQL:
# 2% of tests skipped on the reference; on accelerators 10% skipped, 1% failing for good,
# 3% never run (missing), and each night 0.5% fail once (churn: gaps open, then close).
_RESULTS_SQL = """
INSERT INTO parity_result (run_id, upload_id, test_id, outcome, duration, message, reason_id)
SELECT %(run)s, %(upload)s, t.id, o.outcome, 0.01, '',
       CASE WHEN o.outcome = 2 THEN %(reason)s END
FROM (
    SELECT id, row_number() OVER (ORDER BY id) - 1 AS k
    FROM parity_testcase WHERE project_id = %(project)s
) t
CROSS JOIN LATERAL (
    SELECT CASE
        WHEN %(b)s = 0 THEN CASE WHEN t.k %% 50 = 0 THEN 2 ELSE 1 END
        WHEN t.k %% 10 = %(b)s THEN 2
        WHEN t.k %% 97 = %(b)s THEN 3
        WHEN (t.k * 7 + %(i)s * 13 + %(b)s) %% 200 = 0 THEN 3
        ELSE 1 END AS outcome
) o
WHERE %(b)s = 0 OR t.k %% 31 <> %(b)s
"""


def test_client_ready() -> None:
    """Django set up for requests through its test client (which lets its own host in)."""
    import django

    django.setup()
    from django.test.utils import setup_test_environment

    setup_test_environment()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[10, 200])
    parser.add_argument("--tests", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--keep", action="store_true", help="Keep the databases to inspect.")
    args = parser.parse_args()

    test_client_ready()
    built = {}
    try:
        for runs in args.runs:
            built[runs] = build(runs=runs, tests=args.tests)
        timings = time_round_robin(built, repeat=args.repeat)
    finally:
        if not args.keep:
            for history in built.values():
                use_database(history["database"])
                _db().creation.destroy_test_db(history["original"], verbosity=0)
    print_table(built, timings, tests=args.tests)


def _db():
    from django.db import connection

    return connection


def use_database(name: str) -> None:
    _db().close()
    _db().settings_dict["NAME"] = name


ENDPOINTS = {
    "parity": "parity/",
    "parity_dir": "parity/?dir=1",
    "gaps": "gaps/",
    "gaps_tpu_untracked": "gaps/?backend=tpu&tracked=false",
}


def build(*, runs: int, tests: int) -> dict:
    """A database of its own (never the one DATABASE_URL names) holding ``runs`` nights."""
    db = _db()
    db.settings_dict["TEST"]["NAME"] = f"parity_bench_{runs}"
    original = db.creation.create_test_db(verbosity=0, autoclobber=True)
    project, token = setup_project(tests)
    recompute = build_history(project, runs=runs)
    with db.cursor() as cursor:
        counts = {}
        for table in ("parity_result", "parity_gap", "parity_gapevent", "parity_snapshot"):
            cursor.execute(f"SELECT count(*) FROM {table}")  # noqa: S608 (fixed names)
            counts[table] = cursor.fetchone()[0]
        cursor.execute("ANALYZE")
    database = db.settings_dict["NAME"]
    use_database(original)
    return {
        "runs": runs,
        "database": database,
        "original": original,
        "token": token,
        "slug": project.slug,
        "recompute": recompute,
        **counts,
    }


def time_round_robin(built: dict[int, dict], *, repeat: int) -> dict:
    """Median seconds and queries of one request per (history, endpoint). Histories take turns
    so that load from anything else on the machine weighs on all of them alike."""
    from rest_framework.test import APIClient

    seconds = {(runs, e): [] for runs in built for e in ENDPOINTS}
    queries = {}
    for _ in range(repeat):
        for runs, history in built.items():
            use_database(history["database"])
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=f"Token {history['token']}")
            base = f"/api/v1/projects/{history['slug']}/"
            for name, path in ENDPOINTS.items():
                client.get(base + path)  # warm: connection, plans, caches
                elapsed, count = time_get(client, base + path)
                seconds[(runs, name)].append(elapsed)
                queries[(runs, name)] = count
    return {key: (statistics.median(values), queries[key]) for key, values in seconds.items()}


def setup_project(tests: int):
    from django.db import connection

    from parity.services.projects import project_create, upload_token_create

    project = project_create(
        slug="bench", backends=list(BACKENDS), reference="cpu", default_branch="master"
    )
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO parity_testcase (project_id, key, file, class_name, name, created_at)
            SELECT %(project)s, format('test/dir_%%s/test_%%s.py::TestX::test_%%s', k / 400,
                                       k / 40, k),
                   format('test/dir_%%s/test_%%s.py', k / 400, k / 40), 'TestX',
                   format('test_%%s', k), now()
            FROM generate_series(0, %(tests)s - 1) AS k
            """,
            {"project": project.pk, "tests": tests},
        )
        cursor.execute(
            """
            INSERT INTO parity_reason (project_id, kind, text, fingerprint, first_seen, last_seen)
            VALUES (%(project)s, 'skip', 'not supported on this backend', 'bench', now(), now())
            RETURNING id
            """,
            {"project": project.pk},
        )
        project.bench_reason = cursor.fetchone()[0]
    return project, upload_token_create(project=project)


def run_write(
    project, backend, *, index: int, night: int, key: str, commit: str, started, branch="master"
):
    """A complete run of ``backend`` (the ``index``-th of BACKENDS) with one upload and its
    results, written in bulk: the churning outcomes of ``night`` (``_RESULTS_SQL``)."""
    from django.db import connection

    from parity.models import Run, Upload

    run = Run.objects.create(
        project=project,
        backend=backend,
        key=key,
        commit=commit,
        branch=branch,
        complete=True,
        completed_at=started,
        started_at=started,
    )
    upload = Upload.objects.create(run=run, sha256=f"{run.pk:064x}", size=0, status="done")
    params = {"run": run.pk, "upload": upload.pk, "project": project.pk, "b": index, "i": night}
    with connection.cursor() as cursor:
        cursor.execute(_RESULTS_SQL, {**params, "reason": project.bench_reason})
    return run


def build_history(project, *, runs: int) -> float:
    """Write every night's runs and recompute each; returns the median recompute seconds."""
    from parity.engine import parity_recompute

    backends = {b.name: b for b in project.backends.all()}
    timings = []
    for i in range(runs):
        for index, name in enumerate(BACKENDS):
            run = run_write(
                project,
                backends[name],
                index=index,
                night=i,
                key=f"{i}-{name}",
                commit=f"{i:040x}",
                started=START + datetime.timedelta(days=i, hours=index),
            )
            begun = time.perf_counter()
            parity_recompute(run=run)
            timings.append(time.perf_counter() - begun)
    return statistics.median(timings)


def time_get(client, url: str) -> tuple[float, int]:
    """Seconds one call takes, and how many queries it makes."""
    queries = []

    def count(execute, *args):
        queries.append(1)
        return execute(*args)

    with _db().execute_wrapper(count):
        begun = time.perf_counter()
        response = client.get(url)
        elapsed = time.perf_counter() - begun
    assert response.status_code == 200, response.content
    return elapsed, len(queries)


def print_table(built: dict[int, dict], timings: dict, *, tests: int) -> None:
    print(f"{tests} tests x {len(BACKENDS)} backends; median ms (queries per request)")
    print(
        f"{'runs/backend':>12} {'results':>9} {'gaps':>6} {'events':>6} {'snapshots':>9} "
        f"{'recompute':>9} {'parity/':>11} {'parity?dir':>11} {'gaps/':>11} {'gaps?tpu':>11}"
    )
    for runs, r in built.items():
        cells = " ".join(
            f"{timings[(runs, e)][0] * 1000:>6.1f} ({timings[(runs, e)][1]:>2})" for e in ENDPOINTS
        )
        print(
            f"{runs:>12} {r['parity_result']:>9} {r['parity_gap']:>6} "
            f"{r['parity_gapevent']:>6} {r['parity_snapshot']:>9} "
            f"{r['recompute'] * 1000:>9.1f} {cells}"
        )


if __name__ == "__main__":
    main()
