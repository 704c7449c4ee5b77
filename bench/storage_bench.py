"""What parity's tables cost on disk and in WAL, per row, measured by Postgres itself.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python bench/storage_bench.py [--results 1000000] [--nights 5]

The bench works in its own database, ``<DATABASE_URL's name>_storage`` on the same server,
dropped and created again at each start (so a run is idempotent and nothing else's rows count)
and kept at the end for inspection; the raw uploads go to a temporary directory, removed. It
migrates the database and builds one project through the real write path: JUnit reports posted
to the upload API in process, ingested by the bulk writer and recomputed by the engine as the
Celery task runs them (eager, as ``make demo`` loads).

The shape is PyTorch's: 4 backends (cpu the reference), tests named like PyTorch's
(``test/nn/test_convolution_0.py``, ``TestConvolution0DeviceTypeCUDA``,
``test_convolution_op_4_cuda_bfloat16``) in files of 100, one complete run a backend a night over
``--nights`` nights, ``--results`` results in all. The accelerators skip whole files (gpu 10%,
tpu 30%, neuron 50%), skip 5% of the rest with one of 20 messages and fail about 1%; each night
0.5% of tests fail once, so gaps open and close and gap events are written.

Then it prints, from ``pg_relation_size``, ``pg_table_size``, ``pg_indexes_size`` and
``pg_total_relation_size`` after a ``VACUUM ANALYZE``, every table's rows and bytes per row
(heap, TOAST and maps, indexes, total) and, for the tables that grow, each index's; and WAL, as
the difference of ``pg_current_wal_insert_lsn()`` around:

* one more night's ingest (every backend's run, upload to recompute), per result written;
* retention's delete of the oldest night's results (``results_expire``), per result deleted;
* the same delete after a ``CHECKPOINT``, rolled back, with ``wal_compression`` off and lz4:
  every page it touches is written whole once (full-page writes), the worst case;
* dropping a table holding as many results with the same index, the contrast a partition
  per day would give.

The server's WAL position moves with every database's writes, so where it can (a superuser,
``pg_walinspect``) the bench sums only the WAL records naming this database's relations, full
pages included (a commit record names none: a few bytes a transaction left out); elsewhere it
prints the server's, and says so. It prints the WAL the server wrote while the bench idled
for a few seconds beforehand and the load average, to show the noise. Last it extrapolates the
per-result costs to 1M, 10M and 80M results a day and 180 days: an extrapolation from this
shape (tests a run, files of 100, churn), not a measurement.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

REPO_DIR = Path(__file__).resolve().parent.parent
if str(REPO_DIR) not in sys.path:
    sys.path.insert(0, str(REPO_DIR))

BACKENDS = ("cpu", "gpu", "tpu", "neuron")
MISSING_FILES_PERCENT = (0, 10, 30, 50)
TESTS_PER_FILE = 100
SKIP_PERCENT, FAIL_PERCENT, CHURN_PERMILLE = 5, 1, 5
REASONS = 20
FOLDERS = ("nn", "distributed", "inductor", "dynamo", "functorch", "profiler", "jit", "export")
WORDS = ("convolution", "linalg", "ops", "autograd", "sparse", "fx", "cuda", "optim", "quant")
DTYPES = ("float32", "float16", "bfloat16", "int64")
START = datetime.datetime(2026, 3, 1, 2, tzinfo=datetime.UTC)
PER_DAY = (1_000_000, 10_000_000, 80_000_000)
KEEP_DAYS = 180
IDLE_SECONDS = 3.0
FLUSH_WAIT_SECONDS = 10.0
# Tables whose rows come with runs (each night adds them) and tables whose rows come with tests
# (a project's state, which grows with its tests, not with days). The rest are printed unsorted.
PER_RUN = (
    "result",
    "fileseconds",
    "runfile",
    "run",
    "upload",
    "uploadfile",
    "snapshot",
    "gapevent",
    "reasondaily",
)
PER_TEST = ("testcase", "currentoutcome", "gap", "filecell", "pendingtest", "fileowners")
# The list: printed whether or not the shape wrote a row to them.
NAMED = (
    "result",
    "testcase",
    "run",
    "upload",
    "runfile",
    "gap",
    "gapevent",
    "snapshot",
    "currentoutcome",
    "filecell",
)


def database_own() -> str:
    """Point ``DATABASE_URL`` at ``<name>_storage`` on the same server, created afresh."""
    url = os.environ.get("DATABASE_URL")
    if not url:
        sys.exit("Set DATABASE_URL to a Postgres server the bench may add a database to.")
    parts = urlsplit(url)
    name = parts.path.lstrip("/") + "_storage"
    import psycopg2
    from psycopg2 import sql

    conn = psycopg2.connect(urlunsplit(parts._replace(path="/postgres")))
    conn.autocommit = True
    try:
        with conn.cursor() as cursor:
            for statement in ("DROP DATABASE IF EXISTS {} WITH (FORCE)", "CREATE DATABASE {}"):
                cursor.execute(sql.SQL(statement).format(sql.Identifier(name)))
    finally:
        conn.close()
    os.environ["DATABASE_URL"] = urlunsplit(parts._replace(path="/" + name))
    return name


@dataclass(frozen=True)
class Shape:
    tests: int  # per run of the reference
    nights: int


def test_names(tests: int) -> list[tuple[str, str, str]]:
    """(file, classname, name) of ``tests`` tests, in files of ``TESTS_PER_FILE``."""
    names = []
    for index in range(tests):
        number, row = divmod(index, TESTS_PER_FILE)
        folder = FOLDERS[number % len(FOLDERS)]
        word = WORDS[number % len(WORDS)]
        file = f"test/{folder}/test_{word}_{number}.py"
        classname = f"Test{word.title()}{number}DeviceTypeCUDA"
        name = f"test_{word}_op_{row // 4}_cuda_{DTYPES[row % 4]}"
        names.append((file, classname, name))
    return names


def file_ran(index: int, backend_index: int) -> bool:
    """Whether the backend runs the file of the test at ``index`` (a fixed draw per file)."""
    return (index // TESTS_PER_FILE * 37) % 100 >= MISSING_FILES_PERCENT[backend_index]


def report_xml(names, *, backend_index: int, night: int) -> bytes:
    """One backend's report of one night: its missing files absent, skips and failures drawn
    with fixed seeds (so every night agrees but for the churn)."""
    churn = random.Random(night * 10 + backend_index)
    lines = ['<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite name="pytest">']
    for index, (file, classname, name) in enumerate(names):
        if not file_ran(index, backend_index):
            continue
        draw = (index * 7919 + backend_index * 104729) % 1000
        head = f'<testcase file="{file}" classname="{classname}" name="{name}" time="0.012"'
        # Churn first, so a skipped test that fails one night changes its gap's state.
        if churn.randrange(1000) < CHURN_PERMILLE:
            lines.append(f'{head}><failure message="RuntimeError: flaky"/></testcase>')
        elif backend_index and draw < SKIP_PERCENT * 10:
            reason = f"not supported on this backend: op {draw % REASONS}"
            lines.append(f'{head}><skipped message="{reason}"/></testcase>')
        elif backend_index and draw < (SKIP_PERCENT + FAIL_PERCENT) * 10:
            lines.append(f'{head}><failure message="AssertionError: mismatch"/></testcase>')
        else:
            lines.append(head + "/>")
    lines.append("</testsuite></testsuites>\n")
    return "\n".join(lines).encode()


class Builder:
    def __init__(self, shape: Shape) -> None:
        from rest_framework.test import APIClient

        from parity.services.projects import project_create, upload_token_create

        self.project = project_create(
            slug="bench-storage", backends=list(BACKENDS), reference="cpu", visibility="public"
        )
        self.client = APIClient(HTTP_HOST="127.0.0.1")
        token = upload_token_create(project=self.project)
        self.client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        self.names = test_names(shape.tests)

    def night(self, night: int) -> None:
        from django.core.files.uploadedfile import SimpleUploadedFile

        for index, backend in enumerate(BACKENDS):
            body = report_xml(self.names, backend_index=index, night=night)
            ran = sorted({n[0] for i, n in enumerate(self.names) if file_ran(i, index)})
            manifest = {
                "files": [{"file": f, "exit_code": 0, "duration": 1.2, "report": True} for f in ran]
            }
            data = {
                "project": self.project.slug,
                "backend": backend,
                "commit": f"{night:040x}",
                "run": f"night-{night}-{backend}",
                "complete": "true",
                "timestamp": (START + datetime.timedelta(days=night)).isoformat(),
                "file": [SimpleUploadedFile(f"{backend}-{night}.xml", body)],
                "run_manifest": json.dumps(manifest),
            }
            response = self.client.post("/api/v1/uploads/", data, format="multipart")
            if response.status_code not in (200, 201, 202):
                sys.exit(f"upload refused: {response.status_code} {response.content[:300]!r}")


def results_count() -> int:
    from parity.models import Result

    return Result.objects.count()


def lsn() -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_insert_lsn()")
        return cursor.fetchone()[0]


# The database's own WAL records, read back with pg_walinspect: the server's WAL position also
# moves with every other database's writes, which on a shared server can outweigh the bench's.
WAL_OURS = {"pattern": None}


def walinspect_enable() -> bool:
    """Whether this database's WAL can be told from the server's (a superuser, Postgres 15+)."""
    from django.db import DatabaseError, connection, transaction

    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
            cursor.execute("SELECT oid FROM pg_database WHERE datname = current_database()")
            WAL_OURS["pattern"] = f"%/{cursor.fetchone()[0]}/%"
    except DatabaseError:
        return False
    return True


def wal_since(start: str, *, server: bool = False) -> int:
    """WAL bytes since ``start``: this database's records where pg_walinspect can read them
    (each record naming one of its relations, full pages included), else the server's."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_insert_lsn()")
        end = cursor.fetchone()[0]
        if server or WAL_OURS["pattern"] is None:
            cursor.execute("SELECT pg_wal_lsn_diff(%s, %s)::bigint", [end, start])
            return cursor.fetchone()[0]
        # Records can be read once on disk: the WAL writer flushes them within moments.
        deadline = time.monotonic() + FLUSH_WAIT_SECONDS
        while True:
            cursor.execute("SELECT pg_wal_lsn_diff(pg_current_wal_flush_lsn(), %s) >= 0", [end])
            if cursor.fetchone()[0]:
                break
            if time.monotonic() > deadline:
                # A loaded server's WAL writer is late: read what is on disk (pg_walinspect
                # refuses an end past it), losing at most the last moments' records.
                cursor.execute("SELECT pg_current_wal_flush_lsn()")
                end = cursor.fetchone()[0]
                break
            time.sleep(0.05)
        cursor.execute(
            "SELECT coalesce(sum(record_length) FILTER (WHERE block_ref LIKE %s), 0)::bigint"
            " FROM pg_get_wal_records_info(%s, %s)",
            [WAL_OURS["pattern"], start, end],
        )
        return cursor.fetchone()[0]


def execute(statement: str, params=None) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(statement, params)


@dataclass
class Table:
    name: str
    rows: int
    heap: int
    other: int  # TOAST, free space and visibility maps
    indexes: int
    total: int
    index_sizes: list[tuple[str, int]]


def tables_measure() -> list[Table]:
    from django.apps import apps
    from django.db import connection

    execute("VACUUM ANALYZE")
    measured = []
    with connection.cursor() as cursor:
        for model in apps.get_app_config("parity").get_models():
            table = model._meta.db_table
            cursor.execute(
                f'SELECT count(*) FROM "{table}"'  # noqa: S608 - a model's own table name
            )
            rows = cursor.fetchone()[0]
            # Summed over the partitions of a partitioned table (results, file seconds), whose
            # parent holds nothing; a plain table (no partition tree) is its own one leaf.
            cursor.execute(
                "SELECT sum(pg_relation_size(relid)), sum(pg_table_size(relid)),"
                " sum(pg_indexes_size(relid)), sum(pg_total_relation_size(relid))"
                f" FROM ({_LEAVES}) leaves",
                [table] * 3,
            )
            heap, table_size, indexes, total = (int(size) for size in cursor.fetchone())
            cursor.execute(
                "SELECT c.relname, (SELECT sum(pg_relation_size(leaves.relid))::bigint"
                f" FROM ({_LEAVES.replace('%s', 'c.oid')}) leaves) FROM pg_index i"
                " JOIN pg_class c ON c.oid = i.indexrelid"
                " WHERE i.indrelid = %s::regclass ORDER BY 2 DESC",
                [table],
            )
            index_sizes = list(cursor.fetchall())
            short = table.removeprefix("parity_")
            measured.append(
                Table(short, rows, heap, table_size - heap, indexes, total, index_sizes)
            )
    return measured


_LEAVES = (
    "SELECT relid FROM pg_partition_tree(%s::regclass) WHERE isleaf"
    " UNION ALL SELECT %s::regclass WHERE NOT EXISTS (SELECT FROM pg_partition_tree(%s::regclass))"
)


def _per(size: int, rows: int) -> str:
    return f"{size / rows:,.1f}" if rows else "-"


def tables_print(tables: list[Table]) -> None:
    print("\nBytes per row (VACUUM ANALYZE first; 'other' is TOAST and the free-space and")
    print("visibility maps; an empty table still holds its indexes' first pages)")
    print(
        f"{'table':<16}{'rows':>11}{'heap':>10}{'other':>10}{'indexes':>10}{'total':>10}"
        f"{'total MB':>10}"
    )
    shown = [t for t in tables if t.rows or t.name in NAMED]
    for t in sorted(shown, key=lambda t: -t.total):
        print(
            f"{t.name:<16}{t.rows:>11,}{_per(t.heap, t.rows):>10}{_per(t.other, t.rows):>10}"
            f"{_per(t.indexes, t.rows):>10}{_per(t.total, t.rows):>10}{t.total / 2**20:>10.1f}"
        )
    print("\nEach index of the tables that grow, bytes per row of its table")
    growing = [t for t in shown if t.name in PER_RUN + PER_TEST]
    for t in sorted(growing, key=lambda t: -t.total):
        for name, size in t.index_sizes:
            print(f"  {t.name:<20}{name:<48}{_per(size, t.rows):>9}")
    quiet = [t.name for t in tables if not t.rows and t.name not in NAMED]
    print(f"\nEmpty here (not printed above): {', '.join(sorted(quiet))}")


def wal_idle() -> float:
    start = lsn()
    time.sleep(IDLE_SECONDS)
    return wal_since(start, server=True) / IDLE_SECONDS


def wal_ingest(builder: Builder, night: int) -> tuple[int, int, float]:
    before = results_count()
    start, began = lsn(), time.monotonic()
    builder.night(night)
    seconds = time.monotonic() - began
    return wal_since(start), results_count() - before, seconds


def oldest_runs() -> list[int]:
    from parity.models import Run

    first = Run.objects.order_by("started_at").values_list("started_at", flat=True).first()
    return list(Run.objects.filter(started_at=first).values_list("pk", flat=True))


def wal_delete_rolled_back(runs: list[int], compression: str) -> tuple[int, int]:
    """A CHECKPOINT, then retention's statement for these runs in one transaction, undone."""
    from django.db import connection, transaction

    from parity.models import Result

    execute("CHECKPOINT")
    execute("SET wal_compression = %s", [compression])
    try:
        with transaction.atomic():
            start = lsn()
            with connection.cursor() as cursor:
                cursor.execute(
                    f'DELETE FROM "{Result._meta.db_table}" WHERE run_id = ANY(%s)',  # noqa: S608
                    [runs],
                )
                deleted = cursor.rowcount
            wal = wal_since(start)
            transaction.set_rollback(True)
    finally:
        execute("RESET wal_compression")
    return wal, deleted


def wal_retention(runs: list[int]) -> tuple[int, int, float]:
    """``results_expire`` as beat runs it, its clock set so only the oldest night expired."""
    from django.conf import settings

    from parity.models import Run
    from parity.services.retention import results_expire

    started = Run.objects.filter(pk__in=runs).values_list("started_at", flat=True).first()
    now = started + datetime.timedelta(days=settings.PARITY_RESULTS_KEEP_DAYS, hours=12)
    start, began = lsn(), time.monotonic()
    expired = results_expire(now=now)
    seconds = time.monotonic() - began
    if sorted(expired.runs) != sorted(runs):
        sys.exit(f"retention expired runs {expired.runs}, expected {runs}")
    return wal_since(start), expired.results, seconds


def wal_drop(runs: list[int]) -> tuple[int, int, float]:
    """A table of those runs' results with the results' index, then its DROP: what dropping a
    day's partition costs instead of deleting it."""
    from parity.models import Result

    table = Result._meta.db_table
    execute("DROP TABLE IF EXISTS storage_bench_day")
    execute(
        f'CREATE TABLE storage_bench_day AS SELECT * FROM "{table}" WHERE run_id = ANY(%s)',  # noqa: S608
        [runs],
    )
    execute("CREATE INDEX ON storage_bench_day (run_id, test_id)")
    execute("CHECKPOINT")
    with_rows = _rows("storage_bench_day")
    start, began = lsn(), time.monotonic()
    execute("DROP TABLE storage_bench_day")
    return wal_since(start), with_rows, time.monotonic() - began


def _rows(table: str) -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table}")  # noqa: S608 - the bench's own table
        return cursor.fetchone()[0]


def _per_row(wal: int, rows: int) -> str:
    return f"{wal / rows:,.0f} B a row" if rows else "no rows"


def extrapolate(tables: list[Table], results: int, wal_write: float, wal_delete: float) -> None:
    print("\nExtrapolation (not measured): this shape's bytes per result written, scaled to a")
    print(f"day's results and {KEEP_DAYS} days; results, file seconds and uploaded files expire")
    print("after retention, the other per-run tables are kept forever (so keep growing)")
    by_name = {t.name: t for t in tables}
    expiring = ("result", "fileseconds", "uploadfile")
    per_result_expiring = sum(by_name[n].total for n in expiring if n in by_name) / results
    per_result_kept = (
        sum(by_name[n].total for n in PER_RUN if n in by_name and n not in expiring) / results
    )
    print(
        f"  per result written: {per_result_expiring:,.1f} B expiring, "
        f"{per_result_kept:,.1f} B kept (runs, uploads, run files, snapshots, gap events...)"
    )
    print(
        f"{'results a day':>14}{'GB a day':>10}{f'GB at {KEEP_DAYS} d':>14}"
        f"{'kept GB a year':>16}{'WAL GB a day in':>17}{'out':>8}"
    )
    for per_day in PER_DAY:
        day = per_day * (per_result_expiring + per_result_kept) / 1e9
        stored = per_day * (per_result_expiring * KEEP_DAYS + per_result_kept * KEEP_DAYS) / 1e9
        kept_year = per_day * per_result_kept * 365 / 1e9
        print(
            f"{per_day:>14,}{day:>10.1f}{stored:>14,.0f}{kept_year:>16,.1f}"
            f"{per_day * wal_write / 1e9:>17.1f}{per_day * wal_delete / 1e9:>8.1f}"
        )
    per_test = [n for n in PER_TEST if n in by_name and by_name[n].rows]
    print(
        "  per-test tables grow with a project's tests and backends, not with days: "
        + ", ".join(f"{n} {_per(by_name[n].total, by_name[n].rows)} B a row" for n in per_test)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=int, default=1_000_000, help="results to build in all")
    parser.add_argument("--nights", type=int, default=5, help="nights of runs (at least 3)")
    options = parser.parse_args()
    nights = max(3, options.nights)
    # The reference runs every test; the accelerators fewer: size the tests to the total asked.
    share = sum(100 - m for m in MISSING_FILES_PERCENT) / 100
    tests = max(TESTS_PER_FILE, round(options.results / (nights + 1) / share))
    shape = Shape(tests=tests, nights=nights)

    name = database_own()
    media = tempfile.mkdtemp(prefix="storage-bench-")
    os.environ["PARITY_MEDIA_ROOT"] = media
    try:
        measure(name, shape)
    finally:
        shutil.rmtree(media, ignore_errors=True)


def measure(name: str, shape: Shape) -> None:
    tests, nights = shape.tests, shape.nights
    os.environ.pop("CELERY_BROKER_URL", None)  # ingest and recompute eagerly, in process
    from bench.live import django_setup

    django_setup()
    import logging

    logging.disable(logging.INFO)
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        version = cursor.fetchone()[0]
        settings = {}
        for setting in ("wal_compression", "full_page_writes", "autovacuum", "wal_level"):
            cursor.execute(f"SHOW {setting}")
            settings[setting] = cursor.fetchone()[0]
    print(
        f"database {name}, Postgres {version}, "
        + ", ".join(f"{k} {v}" for k, v in settings.items())
    )
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    print(
        f"shape: {len(BACKENDS)} backends, {tests:,} tests in files of {TESTS_PER_FILE}, "
        f"{nights} nights built and one more measured"
    )

    began = time.monotonic()
    builder = Builder(shape)
    for night in range(nights):
        builder.night(night)
    built = results_count()
    print(f"built {built:,} results in {time.monotonic() - began:.1f} s")

    idle = wal_idle()
    print(f"\nWAL the server wrote while this bench idled {IDLE_SECONDS:.0f} s: {idle:,.0f} B/s")
    if walinspect_enable():
        print("WAL below: this database's records only (pg_walinspect), full pages included")
    else:
        print("WAL below: the server's (no pg_walinspect here), other databases' writes included")
    wal_in, written, seconds = wal_ingest(builder, nights)
    print(
        f"WAL of one night's ingest (upload to recompute, {written:,} results, {seconds:.1f} s): "
        f"{wal_in / 2**20:,.1f} MiB, {_per_row(wal_in, written)}"
    )
    # Sizes before retention deletes anything: a delete leaves free space in the results' pages
    # that only later writes fill, which would count against the rows left.
    tables = tables_measure()
    tables_print(tables)
    stored = next(t.rows for t in tables if t.name == "result")
    runs = oldest_runs()
    for compression in ("off", "lz4"):
        wal, deleted = wal_delete_rolled_back(runs, compression)
        print(
            f"WAL of deleting the oldest night's {deleted:,} results after a CHECKPOINT, "
            f"wal_compression {compression}: {wal / 2**20:,.1f} MiB, {_per_row(wal, deleted)}"
        )
    wal_out, deleted, seconds = wal_retention(runs)
    print(
        f"WAL of retention's delete of them (results_expire, committed, {seconds:.2f} s; full "
        f"pages only if a checkpoint came since the deletes above): "
        f"{wal_out / 2**20:,.1f} MiB, {_per_row(wal_out, deleted)}"
    )
    wal_dropped, dropped, seconds = wal_drop(oldest_runs_next())
    print(
        f"WAL of dropping a table of {dropped:,} results with their index instead "
        f"({seconds * 1000:.0f} ms): {wal_dropped:,} B"
    )

    extrapolate(tables, stored, wal_in / written, wal_out / max(deleted, 1))


def oldest_runs_next() -> list[int]:
    """The oldest night whose results are still stored (the first one has expired)."""
    from parity.models import Run

    first = (
        Run.objects.filter(results_expired_at__isnull=True)
        .order_by("started_at")
        .values_list("started_at", flat=True)
        .first()
    )
    return list(Run.objects.filter(started_at=first).values_list("pk", flat=True))


if __name__ == "__main__":
    main()
