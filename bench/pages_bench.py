"""Dashboard pages read roll-up tables: their server time must follow what they show, not the
history's length nor the project's size. Two modes:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python bench/pages_bench.py [--days 14 28] [--repeat 20] [--loads 5]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/pages_bench \\
        .venv/bin/python bench/pages_bench.py --big [--rounds 5] [--fresh]

``--big`` (issue 23, item 7) builds a project ``bench-pages-100k`` in ``DATABASE_URL``'s database
(migrated, kept for the next run; ``--fresh`` rebuilds it) of 4 backends x 100k tests in 250
files of 400, with ``bench/recompute_bench.py``'s shapes: the accelerators leave out 10, 30 and
50% of the files, skip 5-8% of their tests with one of 20 reasons and fail about 1%, two nights
of runs, every run recomputed by the engine (its rows go into the tables in bulk SQL: loading
takes a minute or two, not an hour of uploads). It then starts gunicorn as the e2e stack runs
it (``tests/e2e/stack.py``: 2 workers of 4 threads) and times every page and read API over
HTTP, ``--rounds`` rounds taking turns after a warm-up, printing each one's best and median
against ``TARGET_MS``.

Without ``--big``:

For each history length it creates a throwaway database, runs ``load_demo --days N`` (uploads
through the API, ingest and the parity engine, as CI would), then:

- each page's server time: the median of ``--repeat`` requests through Django's test client
  (the whole stack: URL routing, view, selectors, template), after one warm-up request;
- the heatmap's full load in Chromium (``/usr/bin/chromium``, headless) from a live server:
  the median of ``--loads`` cold loads (a fresh browser context, so nothing cached) until the
  ``load`` event, with the bytes transferred. Skipped when Chromium is absent.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parity.settings.test")

from bench.parity_endpoints import test_client_ready  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
SLUG = "pytorch-xla"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, nargs="+", default=[14, 28])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--big", action="store_true", help="4 x 100k tests, through gunicorn")
    parser.add_argument("--rounds", type=int, default=5, help="--big: requests per URL")
    parser.add_argument("--fresh", action="store_true", help="--big: rebuild the project")
    parser.add_argument("--only", default="", help="--big: time only URLs whose name has this")
    args = parser.parse_args()
    if args.big:
        big_main(rounds=args.rounds, fresh=args.fresh, only=args.only)
        return

    test_client_ready()
    from django.db import connection
    from django.test.utils import override_settings

    results = []
    for days in args.days:
        # A database of its own per history length, never the one DATABASE_URL names.
        connection.settings_dict["TEST"]["NAME"] = f"parity_pages_bench_{days}"
        original = connection.creation.create_test_db(verbosity=0, autoclobber=True)
        try:
            with tempfile.TemporaryDirectory() as media, override_settings(MEDIA_ROOT=media):
                results.append(bench(days=days, repeat=args.repeat, loads=args.loads))
        finally:
            connection.close()
            connection.creation.destroy_test_db(original, verbosity=0)
    print_table(results)


def bench(*, days: int, repeat: int, loads: int) -> dict:
    from django.core.management import call_command
    from django.db import connection

    began = time.perf_counter()
    call_command("load_demo", "--days", str(days), stdout=io.StringIO())
    loaded = time.perf_counter() - began
    with connection.cursor() as cursor:
        counts = {}
        tables = (
            "parity_run",
            "parity_result",
            "parity_snapshot",
            "parity_reasondaily",
            "parity_gap",
        )
        for table in tables:
            cursor.execute(f"SELECT count(*) FROM {table}")  # noqa: S608 (fixed names)
            counts[table.removeprefix("parity_")] = cursor.fetchone()[0]
        cursor.execute("SELECT count(*) FROM parity_gap WHERE is_open")
        counts["open gap"] = cursor.fetchone()[0]
        cursor.execute("ANALYZE")
    pages = page_urls()
    from django.test import Client

    client = Client()
    timings = {name: time_get(client, url, repeat) for name, url in pages.items()}
    browser = heatmap_load(loads) if CHROMIUM.exists() else None
    return {"days": days, "load_s": loaded, **counts, "pages": timings, "browser": browser}


FILE = "test/test_operations.py"  # ~200 tests on every backend, whatever the history length


def page_urls() -> dict[str, str]:
    """Every page; the file and test pages on one file every history length has."""
    from parity.models import Project, TestCase

    project = Project.objects.get(slug=SLUG)
    test = TestCase.objects.filter(project=project, file=FILE).order_by("key").first()
    p = f"/p/{SLUG}"
    return {
        "overview": "/",
        "overview.json": "/overview.json",
        "heatmap": f"{p}/",
        "heatmap folders": f"{p}/?dir=1",
        "heatmap neuron q": f"{p}/?sort=neuron&q=spmd",
        "file": f"{p}/file/?path={FILE}&backend=neuron",
        "test": f"{p}/tests/{test.pk}/",
        "skip reasons": f"{p}/skip-reasons/",
        "reasons.json": f"{p}/skip-reasons.json",
        "gaps (7 days)": f"{p}/gaps/",
        "gaps (all open)": f"{p}/gaps/?open=1",
        "runs": f"{p}/runs/",
    }


def time_get(client, url: str, repeat: int) -> float:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    timings = []
    for _ in range(repeat):
        began = time.perf_counter()
        client.get(url)
        timings.append(time.perf_counter() - began)
    return statistics.median(timings) * 1000


def heatmap_load(loads: int) -> dict:
    """Median cold full load of the heatmap in Chromium, served by a live server."""
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.db import connections
    from django.test.testcases import LiveServerThread
    from playwright.sync_api import sync_playwright

    server = LiveServerThread("127.0.0.1", StaticFilesHandler, port=0)
    server.daemon = True
    server.start()
    server.is_ready.wait()
    url = f"http://127.0.0.1:{server.port}/p/{SLUG}/"
    timings, sizes = [], []
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # Playwright's loop runs in this thread
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM),
                headless=True,
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
            )
            for _ in range(loads + 1):  # the first warms the server, not the browser
                context = browser.new_context(viewport={"width": 1400, "height": 900})
                page = context.new_page()
                page.goto(url, wait_until="load")
                timing = page.evaluate(
                    "() => { const n = performance.getEntriesByType('navigation')[0];"
                    " const r = performance.getEntriesByType('resource');"
                    " return [n.loadEventEnd - n.startTime,"
                    " n.transferSize + r.reduce((s, e) => s + e.transferSize, 0)]; }"
                )
                timings.append(timing[0])
                sizes.append(timing[1])
                context.close()
            browser.close()
            connections.close_all()
    finally:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        server.terminate()
    return {"load_ms": statistics.median(timings[1:]), "bytes": statistics.median(sizes[1:])}


def print_table(results: list[dict]) -> None:
    print("Server time per page: median ms through Django's test client")
    header = f"{'page':<20}" + "".join(f"{str(r['days']) + ' days':>12}" for r in results)
    print(header)
    for name in results[0]["pages"]:
        print(f"{name:<20}" + "".join(f"{r['pages'][name]:>12.1f}" for r in results))
    print()
    for key in ("run", "result", "snapshot", "reasondaily", "gap", "open gap"):
        print(f"{key + ' rows':<20}" + "".join(f"{r[key]:>12}" for r in results))
    print(f"{'demo load (s)':<20}" + "".join(f"{r['load_s']:>12.1f}" for r in results))
    if all(r["browser"] for r in results):
        print()
        print("Heatmap full load in Chromium (cold context, to the load event)")
        print(f"{'load (ms)':<20}" + "".join(f"{r['browser']['load_ms']:>12.0f}" for r in results))
        print(
            f"{'transferred (KB)':<20}"
            + "".join(f"{r['browser']['bytes'] / 1024:>12.0f}" for r in results)
        )
    else:
        print(f"\nChromium not found at {CHROMIUM}: no browser timings.")


BIG_SLUG = "bench-pages-100k"
BIG_TESTS, BIG_PER_FILE = 100_000, 400  # 250 files
TARGET_MS = 300


def big_main(*, rounds: int, fresh: bool, only: str) -> None:
    from bench.live import django_setup

    django_setup()
    project = big_project(fresh=fresh)
    urls = {name: url for name, url in big_urls(project).items() if only in name}
    with tempfile.TemporaryDirectory() as tmp:
        timings, sizes = big_timed(Path(tmp), urls, rounds=rounds)
    big_print(project, timings, sizes, rounds=rounds)


def big_project(*, fresh: bool):
    """The 100k project: built by recompute_bench's generator with files of 400, every backend's
    runs recomputed (gpu's and cpu's second night too, so gaps have closed and reopened)."""
    from django.db import connection

    from bench.recompute_bench import BACKENDS, _project_fill, project_drop
    from parity.engine import parity_recompute
    from parity.models import BackendState, Project, Run

    project = Project.objects.filter(slug=BIG_SLUG).first()
    # Whole when the last recompute it runs (cpu's second night) made that run current.
    whole = BackendState.objects.filter(project=project, current_run__key="2-cpu").exists()
    if project is not None and (fresh or not whole):
        project_drop(project)
        project = None
    if project is None:
        began = time.perf_counter()
        project = _project_fill(BIG_SLUG, BIG_TESTS, per_file=BIG_PER_FILE, visibility="public")
        for key in ("1-neuron", "2-gpu", "2-cpu"):
            parity_recompute(run=Run.objects.get(project=project, key=key))
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
        print(f"{BIG_SLUG}: built in {time.perf_counter() - began:.0f} s", flush=True)
    assert len(BACKENDS) == project.backends.count()
    return project


def big_urls(project) -> dict[str, str]:
    """Every page and read API of the project; the file, test and run ones on its largest."""
    from django.db.models import Count

    from parity.models import Gap, Reason, Run, TestCase

    file = (
        TestCase.objects.filter(project=project)
        .values("file")
        .annotate(n=Count("id"))
        .order_by("-n", "file")
        .first()["file"]
    )
    test = Gap.objects.filter(project=project, is_open=True, test__file=file).first().test
    first = Run.objects.get(project=project, key="1-neuron")  # opens every neuron gap: 52k
    nightly = Run.objects.get(project=project, key="2-gpu")  # a few gaps open, a few close
    reason = Reason.objects.filter(project=project).order_by("pk").first()
    p, api = f"/p/{project.slug}", f"/api/v1/projects/{project.slug}"
    return {
        "overview": "/",
        "overview.json": "/overview.json",
        "heatmap": f"{p}/",
        "heatmap folders": f"{p}/?dir=1",
        "heatmap sort neuron": f"{p}/?sort=neuron",
        "file (400 tests)": f"{p}/file/?path={file}&backend=neuron",
        "test": f"{p}/tests/{test.pk}/",
        "test search": f"{p}/tests/?q=test_op_17",
        "skip reasons": f"{p}/skip-reasons/",
        "skip-reasons.json": f"{p}/skip-reasons.json",
        "queue": f"{p}/queue/",
        "gaps (7 days)": f"{p}/gaps/",
        "gaps (all open)": f"{p}/gaps/?open=1",
        "gaps (open, neuron)": f"{p}/gaps/?open=1&backend=neuron",
        "runs": f"{p}/runs/",
        "run page (nightly)": f"{p}/runs/{nightly.pk}/",
        "run page (first run)": f"{p}/runs/{first.pk}/",
        "matrix": f"{p}/matrix/",
        "matrix pair": f"{p}/matrix/pair/?a=neuron&b=cpu",
        "exemptions": f"{p}/exemptions/",
        "api parity": f"{api}/parity/",
        "api gaps limit=500": f"{api}/gaps/?limit=500",
        "api skip-reasons": f"{api}/skip-reasons/",
        "api reason trend": f"{api}/skip-reasons/{reason.pk}/trend/",
        "api tests": f"{api}/tests/",
        "api test": f"{api}/tests/{test.pk}/",
        "api triage": f"{api}/triage/",
        "api manifest": f"{api}/manifest/?backend=neuron",
        "api verdict (nightly)": f"/api/v1/runs/{nightly.pk}/verdict/",
        "api verdict (first)": f"/api/v1/runs/{first.pk}/verdict/",
    }


def big_timed(directory: Path, urls: dict[str, str], *, rounds: int):
    """Each URL's times through gunicorn (ms), rounds taking turns, after a warm-up round."""
    import uuid
    from urllib.request import urlopen

    from bench.live import REDIS_URL
    from tests.e2e.stack import LiveStack

    stack = LiveStack(
        directory=directory,
        database_url=os.environ["DATABASE_URL"].split("?")[0],
        redis_url=REDIS_URL,
        queue=f"parity-bench-{uuid.uuid4().hex[:8]}",
    )
    stack.media_root.mkdir(parents=True, exist_ok=True)
    timings = {name: [] for name in urls}
    sizes = {}
    try:
        stack.start_web()
        for number in range(rounds + 1):
            for name, url in urls.items():
                began = time.perf_counter()
                with urlopen(stack.base_url + url, timeout=120) as response:  # noqa: S310
                    assert response.status == 200, (url, response.status)
                    sizes[name] = len(response.read())
                if number:  # the first round warms each gunicorn worker's imports and caches
                    timings[name].append((time.perf_counter() - began) * 1000)
    finally:
        stack.close()
    return timings, sizes


def big_print(project, timings: dict[str, list[float]], sizes: dict[str, int], *, rounds: int):
    from parity.models import Gap, TestCase

    tests = TestCase.objects.filter(project=project).count()
    files = TestCase.objects.filter(project=project).values("file").distinct().count()
    open_gaps = Gap.objects.filter(project=project, is_open=True).count()
    load = " ".join(f"{n:.2f}" for n in os.getloadavg())
    print(
        f"{project.slug}: {tests:,} tests in {files} files x {project.backends.count()} backends,"
        f" {open_gaps:,} open gaps; through gunicorn, {rounds} rounds; load average {load}"
    )
    print(f"{'page':<22}{'best ms':>9}{'median ms':>11}{'KB':>8}   target")
    met = 0
    for name, times in timings.items():
        best, median = min(times), statistics.median(times)
        ok = median < TARGET_MS
        met += ok
        print(
            f"{name:<22}{best:>9.0f}{median:>11.0f}{sizes[name] / 1024:>8.0f}"
            f"   < {TARGET_MS} ms {'met' if ok else 'NOT MET'}"
        )
    print(f"targets met (median): {met} of {len(timings)}")


if __name__ == "__main__":
    main()
