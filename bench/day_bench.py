"""A day at a twentieth of PyTorch core through the live stack, compressed in time (issue 37).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<scratch> \\
        PARITY_BENCH_REDIS_URL=redis://127.0.0.1:6379/13 \\
        .venv/bin/python bench/day_bench.py [--scale 1] [--speedup 96] [--workers 2]

PyTorch core runs about 40k tests on 20 configurations a hundred times a day each (80M results
a day). A twentieth: the same 20 configurations, 5 runs a day each (one per commit, 5 commits),
each run 20 shards of 2,000 results in 50 test files of skewed sizes (``tests/e2e/shapes.py``:
device-generic and parametrized names, skips with reasons, failures with tracebacks): 2,000
uploads, 4M results. Every configuration runs the same tests and draws its own outcomes, and
each run draws one of its shards anew (flaky tests), so gaps open and close all day.
``--scale`` keeps that many of the 100 runs (0.05: the first commit's first 5 configurations).

The day's uploads arrive at a steady rate, ``--speedup`` times faster than real time (a real
day spreads them over the whole day), commit after commit; within a commit its runs' shards come in
a seeded shuffle. Each is sent by the client the server serves (``/ci/parity_ci.py``, fetched as
CI fetches it), from a pool of senders so that a slow answer never delays the next arrival.
Once every shard of a run is ingested, the run is completed (``POST /api/v1/runs/<id>/complete/``),
as the CI job that waits for its shards does; the engine's recompute follows, serialized on the
project lock. Meanwhile one reader fetches the overview, the heatmap, the gaps page and the
latest completed run's page in turn.

The stack is the e2e tests' (``tests/e2e/stack.py``): gunicorn (2 workers of 4 threads) and
``--workers`` Celery workers of ``--concurrency`` processes over Redis, against
``DATABASE_URL``'s database (migrated; each run adds a project ``bench-day-<time>``: use a
scratch database). Worker logs are read for the recomputes' times (the settings module
``bench.day_settings`` logs at INFO).

Printed: uploads accepted, done, failed; ingest lag from accepted to done; the backlog over the
arrivals and whether ingest kept up; recompute seconds per completed run against the interval
between completed runs; page timings under that load; the load average; and whether every run
holds each of its results once. Nothing is asserted: a finding is printed, not raised.
"""

import argparse
import contextlib
import importlib.util
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from urllib.error import HTTPError
from urllib.parse import urlencode
from urllib.request import urlopen

REPO_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_DIR))

from bench.live import django_setup, live_stack, project_fresh  # noqa: E402

DAY_SECONDS = 86_400
CONFIGURATIONS = (  # PyTorch core's shape of names; the first is the reference
    "linux-jammy-py3-10-gcc11",
    "linux-jammy-py3-10-clang15",
    "linux-jammy-py3-12-gcc11",
    "linux-focal-py3-9-clang10-asan",
    "linux-jammy-cuda12-4-py3-10-gcc9-sm86",
    "linux-jammy-cuda12-4-py3-10-gcc9-sm80",
    "linux-focal-cuda11-8-py3-10-gcc9",
    "linux-jammy-cuda12-6-py3-12-gcc11",
    "linux-focal-rocm6-2-py3-10",
    "linux-focal-rocm6-3-py3-10-mi300",
    "macos-m1-py3-9",
    "macos-m2-py3-12",
    "win-vs2022-cpu-py3",
    "win-vs2022-cuda12-4-py3",
    "linux-jammy-xpu-py3-9",
    "linux-jammy-aarch64-py3-10",
    "linux-s390x-py3-10",
    "linux-jammy-py3-10-inductor",
    "linux-jammy-cuda12-4-inductor-sm86",
    "linux-focal-py3-9-dynamo",
)
RUNS_A_DAY = 100  # 5 per configuration: PyTorch core's hundred, a twentieth
SHARDS = 20
CASES = 2_000  # per shard
FILES = 50  # per shard: 1,000 test files in all
SENDERS = 8  # concurrent POSTs at most; more would only queue in gunicorn
SAMPLE_SECONDS = 2.0
PAGE_PAUSE_SECONDS = 1.0
DRAIN_SECONDS = 900  # after the last arrival, how long to wait for ingest and recomputes
_RECOMPUTED = re.compile(
    r"^\[(?P<at>[\d-]+ [\d:,]+): \w+/(?P<process>[\w-]+)\] "
    r"parity recomputed for run (?P<run>\d+) .* in (?P<seconds>[\d.]+)s$"
)
_STEP = re.compile(r"^\[[\d-]+ [\d:,]+: \w+/(?P<process>[\w-]+)\] DONE \S+ \((?P<ms>\d+)ms\)$")
_SKIPPED = re.compile(r"run (?P<run>\d+) (is superseded|is not the current run)")


@dataclass(frozen=True)
class Arrival:
    due: float  # seconds after the day's start, compressed
    run_key: str
    backend: str
    shard: int  # from 0
    report: Path


@dataclass
class Day:
    """What the bench saw; filled by the senders, the monitor and the reader."""

    answers: Counter = field(default_factory=Counter)  # "202", "200", or the refusal
    retries: list[str] = field(default_factory=list)  # the client's retry lines
    late: list[float] = field(default_factory=list)  # POST began after its due time, seconds
    completed: dict[int, float] = field(default_factory=dict)  # run id -> epoch of POST complete
    samples: list[tuple[float, int, Counter]] = field(default_factory=list)  # (t, posted, states)
    pages: dict[str, list[tuple[float, float]]] = field(default_factory=dict)  # (epoch, ms)
    page_errors: Counter = field(default_factory=Counter)
    complete_errors: list[str] = field(default_factory=list)
    loads: list[float] = field(default_factory=list)
    posted: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def reports_write(directory: Path, runs: int) -> list[list[Path]]:
    """Each run's shard reports: same tests on every configuration, its own outcomes, and one
    shard per run drawn anew."""
    from tests.e2e.shapes import shaped_write

    reports = []
    for number in range(runs):
        commit, config = divmod(number, len(CONFIGURATIONS))
        device = "cuda" if re.search("cuda|rocm", CONFIGURATIONS[config]) else "cpu"
        shards = []
        for shard in range(SHARDS):
            flaky = shard == commit % SHARDS
            path = directory / f"{commit}-{config:02d}-{shard:02d}.xml.gz"
            shaped_write(
                path,
                cases=CASES,
                files=FILES,
                device=device,
                seed=shard,
                run=commit,
                first_file=shard * FILES,
                outcome_seed=(config * SHARDS + shard) * 1_000 + (commit + 1 if flaky else 0),
            )
            shards.append(path)
        reports.append(shards)
    return reports


def arrivals_plan(reports: list[list[Path]], *, speedup: float) -> list[Arrival]:
    """The day's uploads at a steady rate, commit after commit, each commit's shards shuffled."""
    interval = DAY_SECONDS / (RUNS_A_DAY * SHARDS) / speedup
    rng = random.Random(37)
    order = []
    for number, shards in enumerate(reports):
        commit, config = divmod(number, len(CONFIGURATIONS))
        for shard, path in enumerate(shards):
            order.append((commit, rng.random(), CONFIGURATIONS[config], shard, path))
    order.sort(key=lambda item: item[:2])
    return [
        Arrival(index * interval, f"{commit}-{backend}", backend, shard, path)
        for index, (commit, _, backend, shard, path) in enumerate(order)
    ]


def served_client(base_url: str, directory: Path):
    """``parity_ci`` as CI gets it: downloaded from the server, imported from the file."""
    path = directory / "parity_ci.py"
    with urlopen(f"{base_url}/ci/parity_ci.py", timeout=30) as response:  # noqa: S310
        path.write_bytes(response.read())
    spec = importlib.util.spec_from_file_location("parity_ci", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def upload_send(parity_ci, client, arrival: Arrival, day: Day, began: float) -> None:
    late = time.monotonic() - began - arrival.due
    request = parity_ci.UploadRequest(
        backend=arrival.backend,
        commit=f"{int(arrival.run_key.split('-')[0]) + 1:040x}",
        branch="main",
        run=arrival.run_key,
        shard=f"{arrival.shard + 1}/{SHARDS}",
    )
    try:
        answers = client.upload([str(arrival.report)], request)
        outcome = "202" if answers[0]["status"] == "queued" else answers[0]["status"]
    except parity_ci.ParityError as exc:
        outcome = f"refused: {exc}"
    with day.lock:
        day.late.append(late)
        day.answers[outcome] += 1
        day.posted += 1


def arrivals_send(parity_ci, client, plan: list[Arrival], day: Day) -> float:
    """Send each upload at its due time; returns the epoch the day began."""
    began, epoch = time.monotonic(), time.time()
    with ThreadPoolExecutor(max_workers=SENDERS) as pool:
        for arrival in plan:
            wait = arrival.due - (time.monotonic() - began)
            if wait > 0:
                time.sleep(wait)
            pool.submit(upload_send, parity_ci, client, arrival, day, began)
    return epoch


class Monitor(threading.Thread):
    """Every ``SAMPLE_SECONDS``: uploads by state, the load average, and each run whose shards
    are all done completed through the API (in the background: one POST each)."""

    def __init__(self, project_id: int, client, day: Day) -> None:
        super().__init__(daemon=True)
        self.project_id, self.client, self.day = project_id, client, day
        self.stop = threading.Event()
        self.pool = ThreadPoolExecutor(max_workers=2)

    def run(self) -> None:
        from django.db import connection

        try:
            while not self.stop.wait(SAMPLE_SECONDS):
                self.sample()
        finally:
            self.pool.shutdown(wait=True)
            connection.close()

    def sample(self) -> None:
        from django.db.models import Count

        from parity.models import Upload

        uploads = Upload.objects.filter(run__project_id=self.project_id)
        states = Counter(dict(uploads.values_list("status").annotate(n=Count("id"))))
        whole = (
            uploads.filter(status="done")
            .values("run_id")
            .annotate(n=Count("id"))
            .filter(n=SHARDS)
            .values_list("run_id", flat=True)
        )
        with self.day.lock:
            self.day.samples.append((time.time(), self.day.posted, states))
            self.day.loads.append(os.getloadavg()[0])
            new = [run_id for run_id in whole if run_id not in self.day.completed]
            for run_id in new:
                self.day.completed[run_id] = time.time()
        for run_id in new:
            self.pool.submit(self.complete, run_id)

    def complete(self, run_id: int) -> None:
        try:
            self.client.run_complete(run_id)
        except Exception as exc:  # noqa: BLE001 (printed with the figures, not lost in a thread)
            with self.day.lock:
                self.day.complete_errors.append(f"run {run_id}: {exc}")


class Reader(threading.Thread):
    """One reader fetching the pages in turn, a pause between requests."""

    def __init__(self, base_url: str, slug: str, day: Day) -> None:
        super().__init__(daemon=True)
        self.base_url, self.slug, self.day = base_url, slug, day
        self.stop = threading.Event()

    def urls(self) -> dict[str, str]:
        from parity.models import Run, TestCase

        p = f"/p/{self.slug}"
        urls = {"overview": "/", "heatmap": f"{p}/", "gaps": f"{p}/gaps/"}
        run = (
            Run.objects.filter(project__slug=self.slug, complete=True)
            .order_by("-completed_at")
            .values_list("pk", flat=True)
            .first()
        )
        if run is not None:
            urls["run page"] = f"{p}/runs/{run}/"
        # The project's other pages a reader opens (issue 46: every page under load): its
        # largest file and that file's first test, the queue, skip reasons, the trend, the
        # overlap matrix, runs and suites, and the gaps API's first page.
        urls.update(
            {
                "queue": f"{p}/queue/",
                "skip reasons": f"{p}/skip-reasons/",
                "trend": f"{p}/trend/",
                "overlap": f"{p}/matrix/",
                "runs": f"{p}/runs/",
                "suites": f"{p}/suites/",
                "api gaps": f"/api/v1/projects/{self.slug}/gaps/?limit=500",
            }
        )
        test = (
            TestCase.objects.filter(project__slug=self.slug)
            .order_by("file", "pk")
            .values_list("pk", "file")
            .first()
        )
        if test is not None:
            urls["file page"] = f"{p}/file/?{urlencode({'path': test[1]})}"
            urls["test page"] = f"{p}/tests/{test[0]}/"
        return urls

    def run(self) -> None:
        from django.db import connection

        try:
            while not self.stop.is_set():
                for name, url in self.urls().items():
                    self.fetch(name, url)
                    if self.stop.wait(PAGE_PAUSE_SECONDS):
                        break
        finally:
            connection.close()

    def warm(self) -> None:
        """Each page fetched a few times first: a gunicorn worker's first request of a page
        imports and compiles, which one that has been serving does not pay for again."""
        for url in self.urls().values():
            for _ in range(3):
                with contextlib.suppress(OSError):
                    urlopen(self.base_url + url, timeout=120).close()  # noqa: S310

    def fetch(self, name: str, url: str) -> None:
        began = time.perf_counter()
        try:
            with urlopen(self.base_url + url, timeout=120) as response:  # noqa: S310
                response.read()
        except HTTPError as exc:
            self.day.page_errors[f"{name} {exc.code}"] += 1
            return
        except OSError as exc:
            self.day.page_errors[f"{name} {type(exc).__name__}"] += 1
            return
        ms = (time.perf_counter() - began) * 1000
        self.day.pages.setdefault(name, []).append((time.time() - ms / 1000, ms))


def drained(project_id: int, day: Day, expected_runs: int, deadline: float) -> bool:
    """Wait until every upload is finished and every run completed; False at the deadline."""
    from parity.models import Upload

    while time.monotonic() < deadline:
        pending = Upload.objects.filter(
            run__project_id=project_id, status__in=("queued", "processing")
        ).exists()
        with day.lock:
            completed = len(day.completed)
        if not pending and completed >= expected_runs:
            return True
        time.sleep(SAMPLE_SECONDS)
    return False


def recomputes_read(stack, run_ids: set[int]) -> tuple[dict[int, tuple[float, float]], int]:
    """From the worker logs: each run's recompute (epoch it ended, seconds of its steps, i.e.
    under the project lock), and how many recomputes were skipped (superseded)."""
    done: dict[int, tuple[float, float]] = {}
    skipped = 0
    for worker in stack.workers:
        steps: dict[str, float] = {}
        for line in worker.log.read_text(errors="replace").splitlines():
            if match := _STEP.match(line):
                steps[match["process"]] = steps.get(match["process"], 0) + int(match["ms"]) / 1000
            elif match := _RECOMPUTED.match(line):
                at = datetime.strptime(match["at"], "%Y-%m-%d %H:%M:%S,%f").timestamp()
                if int(match["run"]) in run_ids:
                    done[int(match["run"])] = (at, steps.get(match["process"], 0.0))
                steps.pop(match["process"], None)
            elif (match := _SKIPPED.search(line)) and int(match["run"]) in run_ids:
                skipped += 1
    return done, skipped


def stored_check(project_id: int, runs: int) -> str:
    """Every run holds SHARDS x CASES results, one per test."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT r.run_id, count(*), count(DISTINCT r.test_id) FROM parity_result r"
            " JOIN parity_run u ON u.id = r.run_id WHERE u.project_id = %s GROUP BY r.run_id",
            [project_id],
        )
        rows = cursor.fetchall()
    expected = SHARDS * CASES
    wrong = [row for row in rows if row[1] != expected or row[2] != expected]
    total = sum(row[1] for row in rows)
    verdict = "every run whole, no test twice" if not wrong and len(rows) == runs else "WRONG"
    return f"{total:,} stored of {runs * expected:,} ({len(rows)} runs; {verdict}: {wrong[:3]})"


def quantiles(values: list[float], digits: int = 2) -> str:
    if not values:
        return "none"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    median = statistics.median(ordered)
    return f"p50 {median:.{digits}f}, p95 {p95:.{digits}f}, max {ordered[-1]:.{digits}f}"


def lags_read(project_id: int) -> tuple[list[float], Counter, list[str]]:
    """Seconds from accepted (the upload row's creation) to done; states; failures' errors."""
    from parity.models import Upload

    uploads = Upload.objects.filter(run__project_id=project_id)
    states = Counter(uploads.values_list("status", flat=True))
    lags = [
        (finished - created).total_seconds()
        for created, finished in uploads.filter(status="done").values_list(
            "created_at", "finished_at"
        )
    ]
    errors = list(uploads.filter(status="failed").values_list("error", flat=True)[:5])
    return lags, states, errors


def backlog_print(day: Day, began: float, window: float) -> tuple[int, int]:
    """The backlog (queued + processing) at each tenth of the arrivals and after; whether
    ingest kept up: nothing beyond what is in flight left waiting at the last arrival."""
    print("  backlog over the day (queued + processing uploads):")
    marks = [began + window * tenth / 10 for tenth in range(1, 11)]
    at_last = 0
    for mark in marks:
        before = [sample for sample in day.samples if sample[0] <= mark]
        if not before:
            continue
        at, posted, states = before[-1]
        backlog = states["queued"] + states["processing"]
        at_last = backlog
        print(
            f"    {at - began:7.0f} s  posted {posted:5d}  done {states['done']:5d}"
            f"  failed {states['failed']:3d}  backlog {backlog:4d}"
        )
    peak, peak_at = max(
        ((s[2]["queued"] + s[2]["processing"], s[0]) for s in day.samples), default=(0, began)
    )
    print(f"    peak backlog {peak} at {peak_at - began:.0f} s; at the last arrival {at_last}")
    return at_last, peak


def _overlaps(at: float, seconds: float, spans: list[tuple[float, float]]) -> bool:
    return any(start < at + seconds and at < end for start, end in spans)


def recomputes_print(
    stack, day: Day, window: float, *, speedup: float
) -> list[tuple[float, float]]:
    """Prints the recomputes; returns when each held the project lock (epoch spans)."""
    run_ids = set(day.completed)
    done, skipped = recomputes_read(stack, run_ids)
    locked = [seconds for _at, seconds in done.values()]
    after = [at - day.completed[run] for run, (at, _seconds) in done.items()]
    interval = window / max(1, len(run_ids))
    print(
        f"  recomputes: {len(run_ids)} runs completed, {len(done)} recomputed,"
        f" {skipped} skipped (superseded or not current)"
    )
    print(f"    seconds under the project lock (its steps): {quantiles(locked)}")
    print(f"    completed to recomputed (waits included): {quantiles(after)}")
    busy = sum(locked) / window if window else 0.0
    under = bool(locked) and max(locked) < interval
    print(
        f"    a run completes every {interval:.1f} s on average ({interval * speedup:.0f}"
        f" s in real time): every recompute under it: {'yes' if under else 'NO'};"
        f" the lock busy {busy:.0%} of the arrivals"
    )
    return [(at - seconds, at) for at, seconds in done.values()]


def pages_print(day: Day, recomputing: list[tuple[float, float]], began: float) -> None:
    """Each page's times, and its slowest requests: when, and whether a recompute ran then."""
    print("  pages under that load, one reader (ms: p50, p95, max; requests):")
    for name, timed in day.pages.items():
        times = [ms for _at, ms in timed]
        print(f"    {name:10} {quantiles(times, digits=0):32} n={len(times)}")
        slowest = sorted(timed, key=lambda item: -item[1])[:3]
        during = [
            f"{ms:.0f} ms at {at - began:.0f} s"
            + (" (a recompute ran)" if _overlaps(at, ms / 1000, recomputing) else "")
            for at, ms in slowest
        ]
        print(f"      slowest: {'; '.join(during)}")
    errors = ", ".join(f"{key} x{n}" for key, n in day.page_errors.items()) or "none"
    print(f"    errors: {errors}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="share of the day's 100 runs")
    parser.add_argument("--speedup", type=float, default=96.0, help="N: the day N times faster")
    parser.add_argument("--workers", type=int, default=2, help="Celery workers")
    parser.add_argument("--concurrency", type=int, default=2, help="processes per worker")
    parser.add_argument("--logs", type=Path, help="copy the stack's logs into this folder")
    args = parser.parse_args()
    django_setup()
    runs = max(1, round(RUNS_A_DAY * args.scale))
    started = time.monotonic()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        reports = reports_write(directory, runs)
        plan = arrivals_plan(reports, speedup=args.speedup)
        print(
            f"a day at 1/20 of PyTorch core: {runs} runs x {SHARDS} shards x {CASES:,} results ="
            f" {runs * SHARDS * CASES:,} results in {len(plan):,} uploads over"
            f" {len(set(CONFIGURATIONS[:runs]))} configurations; reports written in"
            f" {time.monotonic() - started:.0f} s",
            flush=True,
        )
        day_run(directory, plan, runs, args)
        if args.logs:
            args.logs.mkdir(parents=True, exist_ok=True)
            for log in (directory / "stack").glob("*.log"):
                shutil.copy(log, args.logs / log.name)
    load = " ".join(f"{n:.2f}" for n in load_before)
    print(f"took {(time.monotonic() - started) / 60:.1f} min; load average before: {load}")


def day_run(directory: Path, plan: list[Arrival], runs: int, args: argparse.Namespace) -> None:
    from parity.models import Project

    project = project_fresh(f"bench-day-{time.strftime('%m%d-%H%M%S')}", backends=CONFIGURATIONS)
    project_id = Project.objects.get(slug=project.slug).pk
    day = Day()
    with live_stack(
        directory / "stack",
        concurrency=args.concurrency,
        workers=args.workers,
        extra_env={"DJANGO_SETTINGS_MODULE": "bench.day_settings"},
    ) as stack:
        parity_ci = served_client(stack.base_url, directory)

        def log(message: str) -> None:
            if "retrying" in message:
                with day.lock:
                    day.retries.append(message)

        client = parity_ci.Client(stack.base_url, project.token, project.slug, log=log)
        monitor, reader = (
            Monitor(project_id, client, day),
            Reader(stack.base_url, project.slug, day),
        )
        reader.warm()
        monitor.start()
        reader.start()
        began = arrivals_send(parity_ci, client, plan, day)
        window = time.time() - began
        whole = drained(project_id, day, runs, time.monotonic() + DRAIN_SECONDS)
        drain = time.time() - began - window
        reader.stop.set()
        monitor.stop.set()
        reader.join()
        monitor.join()
        recomputes_wait(stack, day, time.monotonic() + DRAIN_SECONDS)
        day_print(stack, day, project_id, runs, args, began=began, window=window)
        print(f"  drained {'in' if whole else 'NOT within'} {drain:.0f} s after the last arrival")


def recomputes_wait(stack, day: Day, deadline: float) -> None:
    """Until each completed run's recompute (or its skip) is in the worker logs."""
    while time.monotonic() < deadline:
        done, skipped = recomputes_read(stack, set(day.completed))
        if len(done) + skipped >= len(day.completed):
            return
        time.sleep(SAMPLE_SECONDS)


def day_print(stack, day: Day, project_id: int, runs: int, args, *, began: float, window: float):
    uploads = len(day.late)
    interval = DAY_SECONDS / (RUNS_A_DAY * SHARDS) / args.speedup
    print(
        f"compressed {args.speedup:g}x (N): an upload every {interval:.2f} s (43.2 s in real"
        f" time), {window / 60:.1f} min of arrivals; {args.workers} Celery workers of"
        f" {args.concurrency} processes, gunicorn 2 x 4 threads; {os.cpu_count()} cores"
    )
    lags, states, errors = lags_read(project_id)
    answers = ", ".join(f"{key} x{n}" for key, n in day.answers.items())
    print(
        f"  uploads: {uploads:,} sent ({answers}); {len(day.retries)} retried by the client;"
        f" started late by {quantiles(day.late)} s"
    )
    print(
        f"  done {states['done']:,}, failed {states['failed']}, not done"
        f" {states['queued'] + states['processing']}{'; errors: ' + str(errors) if errors else ''}"
    )
    print(f"  results: {stored_check(project_id, runs)}")
    print(f"  ingest lag, accepted to done (s): {quantiles(lags)}")
    at_last, _peak = backlog_print(day, began, window)
    kept_up = at_last <= args.workers * args.concurrency
    print(f"  ingest kept up with arrivals: {'yes' if kept_up else 'NO'}")
    recomputing = recomputes_print(stack, day, window, speedup=args.speedup)
    pages_print(day, recomputing, began)
    loads = sorted(day.loads) or [0.0]
    print(
        f"  load average (1 min) during the day: min {loads[0]:.1f}, median"
        f" {statistics.median(loads):.1f}, max {loads[-1]:.1f}"
    )
    for line in day.retries[:5]:
        print(f"  retry: {line}")
    for line in day.complete_errors[:5]:
        print(f"  completing failed: {line}")


if __name__ == "__main__":
    main()
