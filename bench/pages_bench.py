"""Dashboard pages read roll-up tables: their server time must follow what they show, not the
history's length nor the project's size. Two modes:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python bench/pages_bench.py [--days 14 28] [--repeat 20] [--loads 5]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/pages_bench \\
        .venv/bin/python bench/pages_bench.py --big [--rounds 5] [--fresh] [--shape skew]

``--big`` (issues 23 and 37) builds issue 37's three shapes in ``DATABASE_URL``'s database
(migrated, kept for the next run; ``--fresh`` rebuilds them, ``--shape`` picks one):

- ``skew``: 4 backends x 100k tests in files of any size (a Pareto tail: a few files of
  thousands of tests, most of a handful) in folders nested up to four deep;
- ``history``: 20 backends x 1,000 such files, and behind their current runs 100 complete runs
  a day per backend for 90 days (180k runs, their uploads and snapshots; no results; each
  upload names one of five suites and counts its tests);
- ``small``: 4 backends x 6,000 files of 1-10 tests.

Each is ``bench/recompute_bench.py``'s generator: the accelerators leave out 10, 30 and 50% of
the files, skip 5% or more of their tests with one of 20 reasons and fail about 1%, two nights
of runs, every run recomputed by the engine (rows go into the tables in bulk SQL: a build takes
minutes, not an hour of uploads). Each shape also gets what issue 47's pages read: its uploads
name suites (one mapped, neuron excluded from it), a compare view of neuron against the
reference over 365 days (the longest window: the current runs, with results, are dated March
2026, the history's runs have none), and a target per other backend. It then starts gunicorn
as the e2e stack runs it (``tests/e2e/stack.py``: 2 workers of 4 threads) and times every page
and read API of every shape over HTTP (``--only`` filters pages by name), ``--rounds`` rounds
taking turns after a warm-up, and prints one table: each page's median per shape against
``TARGET_MS``.

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
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
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
    parser.add_argument("--big", action="store_true", help="issue 37's shapes, through gunicorn")
    parser.add_argument("--rounds", type=int, default=5, help="--big: requests per URL")
    parser.add_argument("--fresh", action="store_true", help="--big: rebuild the projects")
    parser.add_argument("--only", default="", help="--big: time only pages whose name has this")
    parser.add_argument("--shape", default="", choices=["", "skew", "history", "small"])
    args = parser.parse_args()
    if args.big:
        big_main(rounds=args.rounds, fresh=args.fresh, only=args.only, shape=args.shape)
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
        "runs page 200": f"{p}/runs/?page=200",
        "runs of cpu": f"{p}/runs/?backend=cpu",
        "runs by commit": f"{p}/runs/?sort=commit",
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


TARGET_MS = 300


@dataclass(frozen=True)
class Shape:
    """A project the bench builds: its files' sizes and folders, its backends, and how much
    history (complete runs a day per backend, for ``days``) lies behind their current runs."""

    name: str
    slug: str
    backends: tuple[str, ...]
    layout: tuple[list[int], list[str]]
    history_days: int = 0
    runs_a_day: int = 0

    @property
    def tests(self) -> int:
        return sum(self.layout[0])


def _folders(rng: random.Random, count: int) -> list[str]:
    """``count`` folders nested one to four deep under ``test/``."""
    found = ["test"]
    while len(found) < count:
        parent = rng.choice(found[: max(1, len(found) // 2)] if len(found) > 8 else found)
        if parent.count("/") < 4:
            found.append(f"{parent}/d{len(found)}")
    return found


def _skewed(rng: random.Random, *, tests: int | None = None, files: int | None = None) -> list:
    """File sizes drawn from a Pareto tail (a few files of thousands, most of a handful), up to
    ``tests`` tests or ``files`` files."""
    sizes: list[int] = []
    while (tests is not None and sum(sizes) < tests) or (files is not None and len(sizes) < files):
        sizes.append(min(6_000, max(1, int(rng.paretovariate(1.1) * 3))))
    return sizes


def _layout(sizes: list[int], rng: random.Random, folders: int) -> tuple[list[int], list[str]]:
    dirs = _folders(rng, folders)
    return sizes, [rng.choice(dirs) for _ in sizes]


def shapes() -> dict[str, Shape]:
    """Issue 37's three shapes, drawn from fixed seeds so every build is the same."""
    four = ("cpu", "gpu", "tpu", "neuron")
    twenty = four + tuple(f"cfg{n:02d}" for n in range(4, 20))
    skew, small, history = random.Random(37), random.Random(38), random.Random(39)
    return {
        "skew": Shape(
            name="skew",
            slug="bench-pages-skew",
            backends=four,
            layout=_layout(_skewed(skew, tests=100_000), skew, 60),
        ),
        "history": Shape(
            name="history",
            slug="bench-pages-history",
            backends=twenty,
            layout=_layout(_skewed(history, files=1_000), history, 40),
            history_days=90,
            runs_a_day=100,
        ),
        "small": Shape(
            name="small",
            slug="bench-pages-small",
            backends=four,
            layout=_layout([small.randint(1, 10) for _ in range(6_000)], small, 120),
        ),
    }


def big_main(*, rounds: int, fresh: bool, only: str, shape: str) -> None:
    from bench.live import django_setup

    django_setup()
    chosen = [s for name, s in shapes().items() if shape in ("", name)]
    projects = {s.name: big_project(s, fresh=fresh) for s in chosen}
    urls = {
        (name, page): url
        for name, project in projects.items()
        for page, url in big_urls(project).items()
        if only in page
    }
    with tempfile.TemporaryDirectory() as tmp:
        timings, sizes = big_timed(Path(tmp), urls, rounds=rounds)
    big_print(projects, timings, sizes, rounds=rounds)


def big_project(shape: Shape, *, fresh: bool):
    """The shape's project: built by recompute_bench's generator, every backend's runs
    recomputed (gpu's and cpu's second night too, so gaps have closed and reopened), then its
    history written in bulk SQL."""
    from django.db import connection

    from bench.recompute_bench import _project_fill, project_drop
    from parity.engine import parity_recompute
    from parity.models import Project, Run, Snapshot

    project = Project.objects.filter(slug=shape.slug).first()
    if project is not None and (fresh or not _built(project, shape)):
        history_drop(project)
        project_drop(project)
        project = None
    if project is None:
        began = time.perf_counter()
        project = _project_fill(
            shape.slug, shape.tests, layout=shape.layout, backends=shape.backends,
            visibility="public",
        )  # fmt: skip
        done = set(Snapshot.objects.filter(project=project).values_list("run_id", flat=True))
        for run in Run.objects.filter(project=project).order_by("started_at", "pk"):
            if run.pk not in done:
                parity_recompute(run=run)
        history_write(project, shape)
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
        print(f"{shape.slug}: built in {time.perf_counter() - began:.0f} s", flush=True)
    assert len(shape.backends) == project.backends.count()
    big_extras(project)
    return project


def big_extras(project) -> None:
    """What the suites matrix, the compare views and the trend's targets read (issue 47),
    where a previous run has not written it: uploads naming five suites (and their stored
    summaries), a mapped suite, a compare
    view of neuron against the reference, a target per other backend. The history's uploads
    name their suites as they are written."""
    import datetime

    from django.db import connection

    from parity.models import CompareView, Suite, SuiteSummary, Target
    from parity.services.compare_rows import compare_view_refresh
    from parity.services.compare_views import CompareRequest, compare_view_create
    from parity.services.suite_summaries import suite_summaries_rebuild
    from parity.services.suites import SuiteOnBackend, suite_save
    from parity.services.targets import TargetRequest, target_create

    with connection.cursor() as cursor:
        cursor.execute(_SUITES_SQL, {"project": project.pk})
    backends = list(project.backends.order_by("pk"))
    if not Suite.objects.filter(project=project).exists():  # "unit" mapped, neuron excluded
        suite_save(
            project=project,
            name="unit",
            backends=[
                SuiteOnBackend(b.name, excluded=True, reason="bench")
                if b.name == "neuron"
                else SuiteOnBackend(b.name)
                for b in backends
            ],
        )
    # The history's runs were written by SQL, not finished through ingest: replay their
    # summaries as an upgrade does (manage.py suite_summaries_rebuild).
    if not SuiteSummary.objects.filter(project=project).exists():
        suite_summaries_rebuild(project=project)
    reference = next(b for b in backends if b.pk == project.reference_backend_id)
    for view in CompareView.objects.filter(project=project, computed_at__isnull=True):
        compare_view_refresh(view=view)  # made before views were kept: as beat would
    if not CompareView.objects.filter(project=project).exists():
        compare_view_create(
            project=project,
            request=CompareRequest(
                name=COMPARE_NAME,
                sample=project.backend_named("neuron"),
                basis=reference,
                days=365,  # the longest window: it reaches the current runs, dated March 2026
            ),
        )
    if not Target.objects.filter(project=project).exists():
        due = datetime.date.today() + datetime.timedelta(days=60)
        for backend in backends:
            if backend.pk != reference.pk:
                target_create(
                    project=project,
                    request=TargetRequest(backend=backend.name, score=0.95, due=due),
                )


COMPARE_NAME = "neuron-vs-reference"


def _built(project, shape: Shape) -> bool:
    """Whether a previous run finished it: its tests, cpu's second night current, the history."""
    from parity.models import BackendState, Run, Snapshot

    history = len(shape.backends) * shape.runs_a_day * shape.history_days
    return (
        project.tests.count() == shape.tests
        and BackendState.objects.filter(project=project, current_run__key="2-cpu").exists()
        and Run.objects.filter(project=project, key__startswith="h-").count() == history
        and Snapshot.objects.filter(project=project, run__key__startswith="h-").count() == history
    )


# A complete run per backend every 1440 / runs_a_day minutes of the days before the build, each
# with its upload and a snapshot copied from the backend's current one (the score drifting): what
# the overview's windows and the runs list read. Results are not written: no page reads an old
# run's.
_HISTORY_RUNS_SQL = """
INSERT INTO parity_run (project_id, backend_id, key, commit, branch, ci_url, complete,
                        completed_at, started_at, created_at, probe, exemptions_version,
                        attributes)
SELECT %(project)s, b.id, format('h-%%s-%%s', b.name, n), md5(n::text), 'main', '', true,
       at + interval '20 minutes', at, at, false, '', '{}'
FROM parity_backend b,
     generate_series(0, %(days)s * %(a_day)s - 1) AS n,
     LATERAL (SELECT now() - %(days)s * interval '1 day'
                     + n * interval '1 day' / %(a_day)s + b.id * interval '1 second' AS at) t
WHERE b.project_id = %(project)s
"""
_HISTORY_UPLOADS_SQL = """
INSERT INTO parity_upload (run_id, sha256, size, status, error, counts, warnings, declarations,
                           completes_run, file_hint, shard, created_at, started_at, finished_at,
                           attempts, unsent, suite)
SELECT r.id, md5(r.key) || md5(r.commit), 100000, 'done', '',
       json_build_object('total', 1000, 'failed', r.id %% 7, 'error', 0), '[]', '{}', true, '',
       '', r.started_at, r.started_at, r.completed_at, 1, false,
       (ARRAY['unit', 'integration', 'distributed', 'perf', 'smoke'])[1 + r.id %% 5]
FROM parity_run r WHERE r.project_id = %(project)s AND r.key LIKE 'h-%%'
"""
# The current runs' uploads name the same suites (the history's are written with theirs).
_SUITES_SQL = """
UPDATE parity_upload u
SET suite = (ARRAY['unit', 'integration', 'distributed', 'perf', 'smoke'])[1 + u.run_id %% 5]
FROM parity_run r
WHERE r.id = u.run_id AND r.project_id = %(project)s AND u.suite = ''
"""
_HISTORY_SNAPSHOTS_SQL = """
INSERT INTO parity_snapshot (project_id, backend_id, run_id, reference_run_id, at, score,
    passing, reference_passing, skipped, failed, error, missing, tracked, untracked, intended,
    tracked_closed, reference_missing, pending, not_applicable, rerun, reference_tests,
    differ_not_passed, test_count, coverage_drop)
SELECT s.project_id, s.backend_id, r.id, s.reference_run_id, r.started_at,
    CASE WHEN s.score IS NOT NULL THEN greatest(0, s.score - (r.id %% 50) * 0.001) END,
    greatest(0, s.passing - r.id %% 50), s.reference_passing, s.skipped, s.failed, s.error,
    s.missing, s.tracked, s.untracked + r.id %% 50, s.intended, s.tracked_closed,
    s.reference_missing, s.pending, s.not_applicable, s.rerun, s.reference_tests,
    s.differ_not_passed, s.test_count, false
FROM parity_run r
JOIN parity_backendstate st ON st.backend_id = r.backend_id
JOIN parity_snapshot s ON s.id = st.snapshot_id
WHERE r.project_id = %(project)s AND r.key LIKE 'h-%%'
"""


def history_drop(project) -> None:
    """Its runs' snapshots, uploads and runs by plain SQL (the ORM's cascade fetches each)."""
    from django.db import connection

    with connection.cursor() as cursor:
        for table in ("parity_snapshot", "parity_upload"):
            cursor.execute(
                f"DELETE FROM {table} WHERE run_id IN "  # noqa: S608 (fixed names)
                "(SELECT id FROM parity_run WHERE project_id = %s AND key LIKE 'h-%%')",
                [project.pk],
            )
        cursor.execute(
            "DELETE FROM parity_run WHERE project_id = %s AND key LIKE 'h-%%'", [project.pk]
        )


def history_write(project, shape: Shape) -> None:
    from django.db import connection

    if not shape.history_days:
        return
    params = {"project": project.pk, "days": shape.history_days, "a_day": shape.runs_a_day}
    with connection.cursor() as cursor:
        cursor.execute(_HISTORY_RUNS_SQL, params)
        # Planned for the few runs there were, each foreign-key check of the next two statements
        # would scan every run.
        cursor.execute("ANALYZE parity_run")
        cursor.execute(_HISTORY_UPLOADS_SQL, params)
        cursor.execute(_HISTORY_SNAPSHOTS_SQL, params)


def big_urls(project) -> dict[str, str]:
    """Every page and read API of the project; the file and test ones on its largest file."""
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
        "file (largest)": f"{p}/file/?path={file}&backend=neuron",
        "test": f"{p}/tests/{test.pk}/",
        "test search": f"{p}/tests/?q=test_op_17",
        "skip reasons": f"{p}/skip-reasons/",
        "skip-reasons.json": f"{p}/skip-reasons.json",
        "queue": f"{p}/queue/",
        "gaps (7 days)": f"{p}/gaps/",
        "gaps (all open)": f"{p}/gaps/?open=1",
        "gaps (open, neuron)": f"{p}/gaps/?open=1&backend=neuron",
        "runs": f"{p}/runs/",
        "runs page 200": f"{p}/runs/?page=200",
        "runs of cpu": f"{p}/runs/?backend=cpu",
        "runs by commit": f"{p}/runs/?sort=commit",
        "run page (nightly)": f"{p}/runs/{nightly.pk}/",
        "run page (first run)": f"{p}/runs/{first.pk}/",
        "matrix": f"{p}/matrix/",
        "matrix pair": f"{p}/matrix/pair/?a=neuron&b=cpu",
        "exemptions": f"{p}/exemptions/",
        "suites": f"{p}/suites/",
        "compare views": f"{p}/compare/",
        "compare view": f"{p}/compare/{COMPARE_NAME}/",
        "trend (targets)": f"{p}/trend/",
        "api parity": f"{api}/parity/",
        "api gaps limit=500": f"{api}/gaps/?limit=500",
        "api skip-reasons": f"{api}/skip-reasons/",
        "api reason trend": f"{api}/skip-reasons/{reason.pk}/trend/",
        "api tests": f"{api}/tests/",
        "api test": f"{api}/tests/{test.pk}/",
        "api triage": f"{api}/triage/",
        "api manifest": f"{api}/manifest/?backend=neuron",
        "api suites": f"{api}/suites/",
        "api compare view": f"{api}/compare/{COMPARE_NAME}/",
        "api compare view (red)": f"{api}/compare/{COMPARE_NAME}/?state=regressed",
        "compare view csv": f"{p}/compare/{COMPARE_NAME}.csv",
        "api targets": f"{api}/targets/",
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


def big_print(projects: dict, timings: dict, sizes: dict, *, rounds: int) -> None:
    """One table: a row a page, per shape its median (and KB), each against ``TARGET_MS``."""
    from parity.models import Gap, Run, TestCase

    load = " ".join(f"{n:.2f}" for n in os.getloadavg())
    print(f"Through gunicorn, median of {rounds} rounds; load average after: {load}")
    for name, project in projects.items():
        tests = TestCase.objects.filter(project=project)
        print(
            f"  {name}: {tests.count():,} tests in {tests.values('file').distinct().count():,}"
            f" files x {project.backends.count()} backends,"
            f" {Run.objects.filter(project=project).count():,} runs,"
            f" {Gap.objects.filter(project=project, is_open=True).count():,} open gaps"
        )
    pages = list(dict.fromkeys(page for _, page in timings))
    print(f"{'page':<22}" + "".join(f"{name + ' ms':>13}{'KB':>6}" for name in projects))
    met = total = 0
    for page in pages:
        cells = []
        for name in projects:
            times = timings.get((name, page))
            if not times:
                cells.append(f"{'':>19}")
                continue
            median = statistics.median(times)
            ok = median < TARGET_MS
            met, total = met + ok, total + 1
            flag = " " if ok else "!"
            cells.append(f"{median:>12.0f}{flag}{sizes[(name, page)] / 1024:>6.0f}")
        print(f"{page:<22}" + "".join(cells))
    print(f"under {TARGET_MS} ms (median; ! marks a miss): {met} of {total}")


if __name__ == "__main__":
    main()
