"""The shape matrix (issue 20): ingest through the live stack at every report shape users send.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/parity_bench \\
        .venv/bin/python bench/matrix_bench.py [--quick] [--cases 100000 1000000] \\
        [--files 5 250 2000 10000] [--layouts interleaved grouped] [--rounds 2] [--no-fail]

Each shape is a report from ``tests/e2e/shapes.py`` (device-suffixed and parametrized names,
dotted classnames, ``file=`` present and absent, ~5% skips with reasons, ~1% failures with
tracebacks), gzipped as CI uploads it: ``--cases`` x ``--files`` x ``--layouts`` (new files
appearing throughout the report as parallel runners write them, or grouped by file). For each,
in one table:

* bare parse: ``ElementTree.iterparse`` over the gzipped file (``bench/ingest_bench.py``'s
  yardstick), and junitparser's parse of the same bytes, each in a fresh process;
* first ingest: the file POSTed to a fresh project through gunicorn until its upload is done in
  a prefork Celery worker (one process) over Redis; re-ingest: the same bytes again, as another
  run, its tests now known;
* worker CPU: user + system seconds of the worker's process group (``/proc/PID/stat``);
* Postgres CPU: the same, of the Postgres backends whose ``application_name`` is the worker's
  (and their parallel workers), found in ``pg_stat_activity`` and sampled every
  ``SAMPLE_SECONDS`` during the upload: a backend that exits loses at most its last sample;
  checkpointer, WAL writer and autovacuum are not counted (no pg_stat_statements needed);
* worker peak RSS (VmHWM, reset before each ingest);
* ids drawn per new test: how far the tests table's id sequence moved during the upload,
  against the tests it created (the project's tests counted before and after).

Each figure is the best of ``--rounds`` interleaved rounds (every shape once per round), so a
slow spell of this shared machine weighs on parses and ingests alike; peaks and ids drawn are
the worst of the rounds. Marks, against the constants below (``RATIOS``, ``IDS_FLOOR``,
``LINEAR_FLOOR``, ``PEAK_FLOOR_MB``; bench/README.md tables them): first ingest and re-ingest,
each a ``goal`` and a ``floor`` multiple of the bare parse; ids drawn per new test; linear: 1M
cases within a multiple of the 100k time of the same shape; the worker's peak at 1M. The exit
status is 1 when any floor is missed (``--no-fail``: print only). An upload that fails or
outlasts ``--timeout`` is a missed floor; the worker is then replaced and its backends ended,
and the matrix goes on.
"""

import argparse
import contextlib
import math
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_DIR))

from bench.ingest_bench import parse_timed  # noqa: E402
from bench.live import (  # noqa: E402
    django_setup,
    live_stack,
    peak_rss_mib,
    peak_rss_reset,
    project_fresh,
    upload_post,
    warm_up,
)

CASES, FILES, QUICK_CASES = (100_000, 1_000_000), (5, 250, 2_000, 10_000), (100_000,)
# (goal, floor) of ingest / bare parse, per mode
RATIOS = {"first": (5.0, 8.0), "again": (3.0, 5.0)}
IDS_FLOOR, LINEAR_FLOOR, PEAK_FLOOR_MB, PEAK_AT = 1.1, 12.0, 300, 1_000_000
SAMPLE_SECONDS = 0.2
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Shape:
    cases: int
    files: int
    layout: str

    @property
    def slug(self) -> str:
        return f"bench-matrix-{self.cases}-{self.files}-{self.layout}"


@dataclass
class Ingest:
    """One upload as measured; ``error`` set when it failed or timed out."""

    seconds: float = math.inf
    worker_cpu: float = 0.0
    postgres_cpu: float = 0.0
    peak_mb: float = 0.0
    drawn: int = 0
    created: int = 0
    error: str = ""


@dataclass
class Row:
    """The best of the rounds for one shape and mode."""

    shape: Shape
    mode: str  # "first" or "again"
    gz_mib: float = 0.0
    stdlib: float = math.inf
    junitparser: float = math.inf
    best: Ingest = field(default_factory=Ingest)
    peak_mb: float = 0.0
    drawn_per_new: float = 0.0
    errors: list[str] = field(default_factory=list)

    def add(self, ingest: Ingest) -> None:
        self.peak_mb = max(self.peak_mb, ingest.peak_mb)
        if ingest.error:
            self.errors.append(ingest.error)
            return
        self.drawn_per_new = max(self.drawn_per_new, _per_new(ingest))
        if ingest.seconds < self.best.seconds:
            self.best = ingest


def _per_new(ingest: Ingest) -> float:
    if ingest.created:
        return ingest.drawn / ingest.created
    return math.inf if ingest.drawn else 0.0


# --- measuring ---------------------------------------------------------------------------------


def cpu_seconds(pids) -> dict[int, float]:
    """User + system CPU seconds of each of ``pids`` still running."""
    seconds = {}
    for pid in pids:
        with contextlib.suppress(OSError, ValueError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            seconds[pid] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime
    return seconds


def _grown(before: dict[int, float], after: dict[int, float]) -> float:
    return sum(value - before.get(pid, 0.0) for pid, value in after.items())


_WORKER_BACKENDS = (
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
    "AND (application_name = %(name)s OR leader_pid IN ("
    "SELECT pid FROM pg_stat_activity WHERE application_name = %(name)s))"
)


def worker_backends() -> list[int]:
    from django.db import connection

    from tests.e2e.stack import WORKER_APPLICATION_NAME

    with connection.cursor() as cursor:
        cursor.execute(_WORKER_BACKENDS, {"name": WORKER_APPLICATION_NAME})
        return [pid for (pid,) in cursor.fetchall()]


def tests_of(slug: str) -> int:
    from parity.models import TestCase

    return TestCase.objects.filter(project__slug=slug).count()


def upload_measured(stack, client, path: Path, *, slug: str, run: str, timeout: float) -> Ingest:
    """POST ``path`` and follow it to done, measuring the worker and its Postgres backends."""
    from parity.models import Upload
    from tests.e2e.expect import id_sequence_position

    peak_rss_reset(stack)
    tests_before, drawn_before = tests_of(slug), id_sequence_position()
    worker_before = cpu_seconds(stack.worker.group_pids())
    backends_before = cpu_seconds(worker_backends())
    backends_seen = dict(backends_before)
    stack.mark_logs()
    started = time.perf_counter()
    upload_id = upload_post(client, path, project=slug, run=run)
    status, next_sample = "queued", 0.0
    while status not in ("done", "failed"):
        if time.perf_counter() >= next_sample:
            backends_seen.update(cpu_seconds(worker_backends()))
            next_sample = time.perf_counter() + SAMPLE_SECONDS
        if time.perf_counter() - started > timeout or not stack.worker.alive():
            return _abandoned(stack, f"{run}: not done in {timeout:.0f} s")
        time.sleep(0.01)
        status = Upload.objects.values_list("status", flat=True).get(pk=upload_id)
    seconds = time.perf_counter() - started
    backends_seen.update(cpu_seconds(worker_backends()))
    ingest = Ingest(
        seconds=seconds,
        worker_cpu=_grown(worker_before, cpu_seconds(stack.worker.group_pids())),
        postgres_cpu=_grown(backends_before, backends_seen),
        peak_mb=peak_rss_mib(stack),
        drawn=id_sequence_position() - drawn_before,
        created=tests_of(slug) - tests_before,
    )
    if status == "failed":
        ingest.error = f"{run}: failed: {Upload.objects.get(pk=upload_id).error[:300]}"
    return ingest


def _abandoned(stack, error: str) -> Ingest:
    """Replace a worker stuck on an upload, and end the Postgres backends it left working."""
    from django.db import connection

    retries = [
        line for line in stack.log_since_mark(stack.worker).splitlines() if " retry: " in line
    ]
    if retries:  # what the worker was retrying on, if it was
        error += f"; {len(retries)} retries, the last: {retries[-1].split(' retry: ', 1)[1][:200]}"
    ingest = Ingest(error=error, peak_mb=peak_rss_mib(stack))
    stack.restart_worker()
    with connection.cursor() as cursor:
        for pid in worker_backends():
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    return ingest


# --- the matrix --------------------------------------------------------------------------------


def report_write(directory: Path, shape: Shape) -> Path:
    from tests.e2e.shapes import shaped_write

    path = directory / f"shape-{shape.cases}-{shape.files}-{shape.layout}.xml.gz"
    shaped_write(path, cases=shape.cases, files=shape.files, layout=shape.layout)
    return path


def shape_round(stack, shape: Shape, report: Path, rows: dict, *, timeout: float) -> None:
    """One round of one shape: both parses, then a fresh project's first ingest and re-ingest."""
    from tests.e2e.client import ApiClient

    stdlib, junitparser = parse_timed("stdlib", report), parse_timed("junitparser", report)
    project = project_fresh(shape.slug)
    client = ApiClient(base_url=stack.base_url, token=project.token)
    for mode in RATIOS:
        row = rows[shape, mode]
        row.gz_mib = report.stat().st_size / 2**20
        row.stdlib, row.junitparser = min(row.stdlib, stdlib), min(row.junitparser, junitparser)
    for mode in RATIOS:
        row = rows[shape, mode]
        ingest = upload_measured(stack, client, report, slug=shape.slug, run=mode, timeout=timeout)
        row.add(ingest)
        print(f"  {shape} {mode}: {_progress(ingest, stdlib)}", flush=True)
        if ingest.error and mode == "first":
            # A re-ingest of a failed first ingest would be another first ingest.
            rows[shape, "again"].errors.append("again: not run, the first ingest failed")
            break
    started = time.perf_counter()
    project_drop(shape.slug)
    print(f"  {shape} dropped in {time.perf_counter() - started:.1f} s", flush=True)


def _progress(ingest: Ingest, stdlib: float) -> str:
    if ingest.error:
        return ingest.error
    return (
        f"{ingest.seconds:.2f} s ({ingest.seconds / stdlib:.1f}x parse), "
        f"{ingest.drawn:,} ids for {ingest.created:,} new tests"
    )


def project_drop(slug: str) -> None:
    """Keep the database small between shapes: a million results per shape adds up. Results
    and tests go first in two statements: the ORM's cascade fetches every test to look for
    the roll-up rows naming it (there are none: the bench never completes a run, and if there
    were, their foreign keys would refuse the DELETE). The two statements take a fraction of
    the cascade's time, which grows with the tests."""
    from django.db import connection, transaction

    from parity.models import Project, Result, Run, TestCase
    from parity.models.sql import model_sql

    results = model_sql(
        "DELETE FROM {result} WHERE run_id IN (SELECT id FROM {run} WHERE project_id = %s)",
        result=Result,
        run=Run,
    )
    tests = model_sql("DELETE FROM {test} WHERE project_id = %s", test=TestCase)
    for project in Project.objects.filter(slug=slug):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(results, [project.pk])
            cursor.execute(tests, [project.pk])
            project.delete()
    # The deleted rows' space goes to the next shape's, as autovacuum would give it in time:
    # without this, a million rows inserted right after a million deleted grew the files (the
    # bench's database held gigabytes of tests table for no row) and later shapes wrote into that.
    with connection.cursor() as cursor:
        cursor.execute(model_sql("VACUUM {result}, {test}", result=Result, test=TestCase))


def matrix_run(shapes: list[Shape], *, rounds: int, timeout: float) -> dict:
    rows = {(shape, mode): Row(shape=shape, mode=mode) for shape in shapes for mode in RATIOS}
    with tempfile.TemporaryDirectory(prefix="matrix-bench-") as tmp:
        directory = Path(tmp)
        print(f"writing {len(shapes)} reports ...", flush=True)
        reports = {shape: report_write(directory, shape) for shape in shapes}
        logs = Path(tempfile.mkdtemp(prefix="matrix-bench-stack-"))  # kept: a failure's story
        print(f"stack logs in {logs}", flush=True)
        with live_stack(logs, concurrency=1) as stack:
            from tests.e2e.client import ApiClient

            warm = project_fresh("bench-matrix-warm-up")
            warm_up(
                ApiClient(base_url=stack.base_url, token=warm.token), directory, project=warm.slug
            )
            project_drop(warm.slug)
            for number in range(rounds):
                print(f"round {number + 1} of {rounds}", flush=True)
                for shape in shapes:
                    shape_round(stack, shape, reports[shape], rows, timeout=timeout)
    return rows


# --- the table ---------------------------------------------------------------------------------

HEADER = (
    f"{'cases':>9} {'files':>6} {'layout':<11} {'mode':<8} {'MiB gz':>6} {'parse s':>7} "
    f"{'junitp s':>8} {'ingest s':>8} {'ratio':>13} {'wkr CPU':>7} {'PG CPU':>6} "
    f"{'peak MB':>13} {'ids/new':>13} {'1M/100k':>13}"
)


def mark(value: float, goal: float | None, floor: float) -> str:
    """``goal``, ``floor`` or ``MISS`` for a figure that must stay at or under them; ``ok`` or
    ``MISS`` for one with a floor only."""
    if value > floor:
        return "MISS"
    if goal is None:
        return "ok"
    return "goal" if value <= goal else "floor"


def table_print(rows: dict, *, rounds: int) -> list[str]:
    """Print the matrix; returns what missed a floor."""
    print(f"\nbest of {rounds} interleaved rounds; marks: goal / floor / MISS (issue 20)")
    print(HEADER)
    missed = []
    for (shape, mode), row in rows.items():
        cells, misses = _cells(row, rows.get((Shape(100_000, shape.files, shape.layout), mode)))
        print(" ".join(cells))
        missed += [
            f"{shape.cases:,} cases, {shape.files:,} files, {shape.layout}, {mode}: {m}"
            for m in misses
        ]
        for error in row.errors:
            print(f"{'':>9} ! {error}")
    return missed


def _cells(row: Row, small: Row | None) -> tuple[list[str], list[str]]:
    shape, best, misses = row.shape, row.best, []
    cells = [
        f"{shape.cases:>9,} {shape.files:>6,} {shape.layout:<11} {_MODES[row.mode]:<8}",
        f"{row.gz_mib:>6.1f} {row.stdlib:>7.2f} {row.junitparser:>8.2f}",
    ]
    if row.errors:
        misses.append(f"{len(row.errors)} of the rounds failed")
    if math.isinf(best.seconds):
        return [*cells, f"{'FAILED':>8}"], misses
    ratio = best.seconds / row.stdlib
    ratio_mark = mark(ratio, *RATIOS[row.mode])
    idle = not best.created and not row.drawn_per_new  # a re-ingest drawing nothing
    ids_mark = "ok" if idle else mark(row.drawn_per_new, None, IDS_FLOOR)
    cells += [
        f"{best.seconds:>8.2f} {ratio:>6.2f}x {ratio_mark:<5}",
        f"{best.worker_cpu:>7.2f} {best.postgres_cpu:>6.2f}",
        _peak_cell(row, misses),
        f"{_ratio_text(row.drawn_per_new):>7} {ids_mark:<5}",
        _linear_cell(row, small, misses),
    ]
    if ratio_mark == "MISS":
        misses.append(f"ingest {ratio:.2f}x the bare parse")
    if ids_mark == "MISS":
        misses.append(f"{_ratio_text(row.drawn_per_new)} ids drawn per new test")
    return cells, misses


_MODES = {"first": "first", "again": "re"}


def _ratio_text(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.2f}x"


def _peak_cell(row: Row, misses: list[str]) -> str:
    if row.shape.cases < PEAK_AT:
        return f"{row.peak_mb:>7.0f}      "
    peak_mark = mark(row.peak_mb, None, PEAK_FLOOR_MB - 1e-9)
    if peak_mark == "MISS":
        misses.append(f"worker peak {row.peak_mb:.0f} MB")
    return f"{row.peak_mb:>7.0f} {peak_mark:<5}"


def _linear_cell(row: Row, small: Row | None, misses: list[str]) -> str:
    if row.shape.cases == 100_000 or small is None or math.isinf(small.best.seconds):
        return f"{'':>13}"
    growth = row.best.seconds / small.best.seconds
    growth_mark = mark(growth, None, LINEAR_FLOOR)
    if growth_mark == "MISS":
        misses.append(f"{growth:.1f}x the 100k time")
    return f"{growth:>6.1f}x {growth_mark:<5}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, nargs="+", default=list(CASES))
    parser.add_argument("--files", type=int, nargs="+", default=list(FILES))
    parser.add_argument("--layouts", nargs="+", default=["interleaved", "grouped"])
    parser.add_argument("--rounds", type=int, default=2, help="best of this many rounds")
    parser.add_argument("--quick", action="store_true", help="100k cases only (development)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds one upload may take")
    parser.add_argument("--no-fail", action="store_true", help="exit 0 even when floors miss")
    args = parser.parse_args()
    cases = QUICK_CASES if args.quick else args.cases
    shapes = [Shape(n, f, layout) for n in cases for f in args.files for layout in args.layouts]
    django_setup()
    rows = matrix_run(shapes, rounds=args.rounds, timeout=args.timeout)
    missed = table_print(rows, rounds=args.rounds)
    print(f"\nfloors missed: {len(missed)}")
    for line in missed:
        print(f"  {line}")
    if missed and not args.no_fail:
        sys.exit(1)


if __name__ == "__main__":
    main()
