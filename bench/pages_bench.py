"""Dashboard pages read roll-up tables: their server time must not grow with history. This loads
the demo project with N and 2N days of history and times every page.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python bench/pages_bench.py [--days 14 28] [--repeat 20] [--loads 5]

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
    args = parser.parse_args()

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


if __name__ == "__main__":
    main()
