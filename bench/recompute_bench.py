"""The engine's recompute after a run completes, against a bare parse of that run's report.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/recompute \\
        .venv/bin/python bench/recompute_bench.py [--sizes 100k,1m] [--rounds 3] [--live 100k]

For each size a project ``bench-recompute-<size>`` is built in ``DATABASE_URL``'s database (kept
for the next run; ``--fresh`` rebuilds it): 4 backends, cpu the reference, tests over files of
100 tests each, and runs whose results go straight into the tables in bulk SQL (the writer's
speed is not what this measures; ``bench/ingest_bench.py`` times it). The accelerators skip
whole files (gpu 10%, tpu 30%, neuron 50% of them), skip 5-8% of their tests with one of 20
reasons and fail about 1%; every night 0.5% of tests fail once (churn). A few triages (a file
exemption, a glob, a reason) give the triage steps something to match.

Four recomputes are timed, as ``parity_recompute`` runs them in the worker:

* first completion: neuron's first run completes (all its gaps open);
* nightly: gpu's next run completes, few outcomes changing;
* reference moves on: cpu's next run completes, and every backend is diffed against it again;
* late shard: a shard of gpu's nightly, current now, arrives: results of 5 files the run
  lacked, and its manifest listing 10 other files as crashed.

They run in that order inside one transaction that is rolled back, so every round starts from
the same tables (the commit's WAL flush is not timed; deferred foreign-key checks run as each
statement does, so they are). Each figure is printed beside the bare
stdlib parse (``ElementTree.iterparse`` over the gzipped report of that run's size, clearing each
finished element) and the ratio, with the statements each recompute ran. ``--live`` sizes are
also timed through the live stack (gunicorn and a Celery worker over Redis,
``tests/e2e/stack.py``): from the POST of an upload with ``complete=true`` until
``GET /api/v1/projects/<slug>/parity/`` names its run as the backend's current run.

Rounds interleave everything (parse, recomputes, live uploads) and each figure is the best of
them: the machine is shared, and a slow spell that fell on one side of a ratio only would make
it say nothing about the code. Targets (issue 20; ``GOAL``, ``FLOOR``, ``LINEAR`` below):
recompute within a multiple of the parse (goal; floor at 100k), and 1M within a multiple of
100k (linear).
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import os
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

REPO_DIR = Path(__file__).resolve().parent.parent
if str(REPO_DIR) not in sys.path:
    sys.path.insert(0, str(REPO_DIR))

from bench.live import django_setup, live_stack, target_line, upload_post, warm_up  # noqa: E402

SIZES = {"10k": 10_000, "100k": 100_000, "1m": 1_000_000}
ROLLED_BACK = (
    "currentoutcome",
    "gap",
    "gapevent",
    "pendingtest",
    "snapshot",
    "filecell",
    "fileowners",
    "reasondaily",
    "backendstate",
    "result",  # the late shard's
    "runfile",
    "upload",
)
BACKENDS = ("cpu", "gpu", "tpu", "neuron")
MISSING_FILES_PERCENT = (0, 10, 30, 50)
TESTS_PER_FILE = 100
REASONS = 20
START = datetime.datetime(2026, 3, 1, 2, tzinfo=datetime.UTC)
SCENARIOS = ("first completion", "nightly", "reference moves on", "late shard")
GOAL, FLOOR, LINEAR = 1.0, 2.0, 12.0
POLL_SECONDS = 0.02

_TESTS_SQL = """
INSERT INTO parity_testcase (project_id, key, file, class_name, name, created_at)
SELECT %(project)s,
       format('test/dir_%%s/test_%%s.py::TestF%%s::test_op_%%s_float32', f / 20, f, f, k),
       format('test/dir_%%s/test_%%s.py', f / 20, f), format('TestF%%s', f),
       format('test_op_%%s_float32', k), now()
FROM generate_series(0, %(tests)s - 1) AS k, LATERAL (SELECT k / %(per_file)s AS f) AS files
"""

# The same tests in files of the sizes and folders given (``bench/pages_bench.py``'s shapes):
# file f holds sizes[f] tests, its class ``TestF<f>`` as above (the results read f from it).
_LAYOUT_TESTS_SQL = """
INSERT INTO parity_testcase (project_id, key, file, class_name, name, created_at)
SELECT %(project)s, format('%%s/test_%%s.py::TestF%%s::test_op_%%s_float32', d, f, f, k),
       format('%%s/test_%%s.py', d, f), format('TestF%%s', f), format('test_op_%%s_float32', k),
       now()
FROM (
    SELECT d, f - 1 AS f, row_number() OVER (ORDER BY f, n) - 1 AS k
    FROM unnest(%(sizes)s::int[], %(dirs)s::text[]) WITH ORDINALITY AS files(size, d, f),
         generate_series(1, size) AS n
) tests ORDER BY k
"""

# Outcomes of test k (file f) on backend b (0 = cpu, the reference) in night i: the reference
# skips 2% and fails 0.2%; an accelerator leaves out whole files, skips (5 + b)% with a reason,
# fails 1%; every night 0.5% of tests fail once, somewhere else each night.
_RESULTS_SQL = """
INSERT INTO parity_result (run_id, upload_id, test_id, outcome, duration, message, reason_id)
SELECT %(run)s, %(upload)s, t.id, o.outcome, 0.01 + (t.k %% 7) * 0.003, '',
       CASE WHEN o.outcome = 2 THEN %(reason)s + t.k %% %(reasons)s END
FROM (
    SELECT id, class_name, row_number() OVER (ORDER BY id) - 1 AS k FROM parity_testcase
    WHERE project_id = %(project)s
) t
CROSS JOIN LATERAL (SELECT substr(t.class_name, 6)::int AS f) f
CROSS JOIN LATERAL (
    SELECT CASE
        WHEN (t.k * 7 + %(i)s * 131 + %(b)s) %% 200 = 0 THEN 3
        WHEN %(b)s = 0 THEN CASE WHEN t.k %% 50 = 0 THEN 2 WHEN t.k %% 500 = 1 THEN 3 ELSE 1 END
        WHEN t.k %% 100 < 5 + %(b)s THEN 2
        WHEN t.k %% 97 = %(b)s THEN 3
        ELSE 1 END AS outcome
) o
WHERE (f.f * 37 + %(b)s * 11) %% 100 >= %(missing)s
"""
# What the writer sums per file as it writes results (FileSeconds), for the rows written above.
_FILE_SECONDS_SQL = """
INSERT INTO parity_fileseconds (run_id, upload_id, file, seconds)
SELECT r.run_id, r.upload_id, t.file, sum(r.duration)
FROM parity_result r JOIN parity_testcase t ON t.id = r.test_id
WHERE r.run_id = %(run)s
GROUP BY r.run_id, r.upload_id, t.file
"""


@dataclass
class Built:
    label: str
    tests: int
    runs: dict[str, object]  # scenario -> the run whose completion it times


@dataclass
class Best:
    parse: float = float("inf")
    parse_cpu: float = float("inf")  # the parse's CPU seconds
    recompute: dict[str, float] = field(default_factory=dict)
    postgres_cpu: dict[str, float] = field(default_factory=dict)  # the recompute's backend's
    statements: dict[str, int] = field(default_factory=dict)
    live: dict[str, float] = field(default_factory=dict)

    def keep(self, figures: dict[str, float], name: str) -> None:
        best = getattr(self, name)
        for key, seconds in figures.items():
            best[key] = min(best.get(key, float("inf")), seconds)


def project_build(label: str, tests: int, *, fresh: bool) -> Built:
    """The bench project of this size, built unless a previous run left it whole."""
    from parity.models import Project, Run

    slug = f"bench-recompute-{label}"
    project = Project.objects.filter(slug=slug).first()
    if project is not None and (fresh or not _whole(project, tests)):
        project_drop(project)
        project = None
    if project is None:
        began = time.perf_counter()
        project = _project_fill(slug, tests)
        print(f"{label}: project built in {time.perf_counter() - began:.0f} s", flush=True)
    runs = {r.key: r for r in Run.objects.filter(project=project)}
    scenario_runs = dict(zip(SCENARIOS, ("1-neuron", "2-gpu", "2-cpu", "2-gpu"), strict=True))
    return Built(
        label=label,
        tests=tests,
        runs={name: runs[key] for name, key in scenario_runs.items()},
    )


def _whole(project, tests: int) -> bool:
    """Whether a previous run finished building it (the last run it writes is cpu's 2nd)."""
    return project.tests.count() == tests and project.runs.filter(key="2-cpu").exists()


def project_drop(project) -> None:
    """Delete a bench project, its big tables by plain SQL (the ORM would fetch every row)."""
    from django.db import connection

    with connection.cursor() as cursor:
        for table in ("parity_currentoutcome", "parity_gapevent", "parity_filecell"):
            cursor.execute(f"DELETE FROM {table} WHERE project_id = %s", [project.pk])  # noqa: S608
        cursor.execute(
            "DELETE FROM parity_result WHERE run_id IN "
            "(SELECT id FROM parity_run WHERE project_id = %s)",
            [project.pk],
        )
        cursor.execute("DELETE FROM parity_gap WHERE project_id = %s", [project.pk])
        cursor.execute("DELETE FROM parity_testcase WHERE project_id = %s", [project.pk])
    project.delete()


def _project_fill(
    slug: str,
    tests: int,
    *,
    per_file: int = TESTS_PER_FILE,
    layout: tuple[list[int], list[str]] | None = None,
    backends: tuple[str, ...] = BACKENDS,
    **create,
):
    """Tests, reasons and triages, the first night of cpu, gpu and tpu recomputed, then the runs
    the scenarios complete: neuron's first (and every further backend's), and the second night
    of gpu and cpu. ``per_file``, ``layout`` (each file's size and folder, in place of
    ``tests`` in files of ``per_file``), ``backends`` and ``create`` (``project_create``'s
    options) are for ``bench/pages_bench.py``'s shapes."""
    from django.db import connection

    from parity.engine import parity_recompute
    from parity.services.projects import project_create
    from parity.services.triage import TriageRequest, triage_create

    project = project_create(
        slug=slug, backends=list(backends), reference="cpu", default_branch="main", **create
    )
    with connection.cursor() as cursor:
        if layout is None:
            params = {"project": project.pk, "tests": tests, "per_file": per_file}
            cursor.execute(_TESTS_SQL, params)
        else:
            sizes, dirs = layout
            cursor.execute(_LAYOUT_TESTS_SQL, {"project": project.pk, "sizes": sizes, "dirs": dirs})
        cursor.execute(
            """
            INSERT INTO parity_reason (project_id, kind, text, fingerprint, first_seen, last_seen)
            SELECT %(project)s, 'skip', format('not supported on this backend (%%s)', n),
                   format('bench-%%s', n), now(), now()
            FROM generate_series(0, %(reasons)s - 1) AS n
            RETURNING id
            """,
            {"project": project.pk, "reasons": REASONS},
        )
        first_reason = min(row[0] for row in cursor.fetchall())
        cursor.execute("ANALYZE parity_testcase")
    by_name = {b.name: b for b in project.backends.all()}
    for request in (
        TriageRequest(kind="intended", match="test/dir_1/test_20.py", backend="tpu", note="bench"),
        TriageRequest(
            kind="intended", match="test/dir_2/**", backends=["gpu", "neuron"], note="bench"
        ),
        TriageRequest(kind="intended", reason=first_reason + 3, note="bench"),
    ):
        triage_create(project=project, request=request)
    night = {}
    for b, name in enumerate(backends):
        night[name] = _run_write(
            project, by_name[name], b=b, night=1, reason=first_reason, per_file=per_file
        )
    for name in BACKENDS[:3]:
        parity_recompute(run=night[name])
    for name in ("gpu", "cpu"):
        _run_write(
            project,
            by_name[name],
            b=BACKENDS.index(name),
            night=2,
            reason=first_reason,
            per_file=per_file,
        )
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    return project


def _run_write(project, backend, *, b: int, night: int, reason: int, per_file: int):
    from django.db import connection

    from parity.models import Run, Upload

    started = START + datetime.timedelta(days=night, minutes=b)
    run = Run.objects.create(
        project=project,
        backend=backend,
        key=f"{night}-{backend.name}",
        commit=f"{night:040x}",
        branch="main",
        complete=True,
        completed_at=started,
        started_at=started,
    )
    upload = Upload.objects.create(run=run, sha256=f"{run.pk:064x}", size=0, status="done")
    params = {
        "run": run.pk,
        "upload": upload.pk,
        "project": project.pk,
        "b": b,
        "i": night,
        "reason": reason,
        "reasons": REASONS,
        "per_file": per_file,
        "missing": MISSING_FILES_PERCENT[b % len(MISSING_FILES_PERCENT)],
    }
    with connection.cursor() as cursor:
        cursor.execute(_RESULTS_SQL, params)
        cursor.execute(_FILE_SECONDS_SQL, params)
    return run


def recomputes_timed(built: Built, *, timeout: float) -> tuple[dict, dict, dict]:
    """Seconds, Postgres CPU seconds and statements of each scenario's recompute, all rolled
    back afterwards. A statement running past ``timeout`` seconds is cancelled and its
    recompute counted as infinitely slow (its savepoint rolls back; the next scenarios still
    run). On a shared machine the CPU seconds vary less than the wall clock."""
    from django.db import OperationalError, connection, transaction

    from parity.engine import parity_recompute

    seconds, cpu, statements = {}, {}, {}
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            backend_pid = cursor.fetchone()[0]
            cursor.execute("SET LOCAL statement_timeout = %s", [int(timeout * 1000)])
            # Deferred foreign-key checks run at commit, which the rollback skips: checked as
            # each statement runs instead, so the figures include them as a worker pays them.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        for name, run in built.runs.items():
            counted = []
            with connection.execute_wrapper(
                lambda execute, *a, counted=counted: counted.append(1) or execute(*a)
            ):
                if name == "late shard":
                    _late_shard_write(run)
                began, began_cpu = time.perf_counter(), _process_cpu(backend_pid)
                try:
                    assert parity_recompute(run=run) is not None, name
                    seconds[name] = time.perf_counter() - began
                except OperationalError:  # the statement timeout
                    seconds[name] = float("inf")
                cpu[name] = _process_cpu(backend_pid) - began_cpu
            statements[name] = len(counted)
        transaction.set_rollback(True)
    with connection.cursor() as cursor:  # the rolled-back rows, gone before the next round
        # Every table a recompute writes: one left out bloats with each rolled-back round.
        for table in ROLLED_BACK:
            cursor.execute(f"VACUUM ANALYZE parity_{table}")
    return seconds, cpu, statements


def _late_shard_write(run) -> None:
    """A shard of ``run`` uploaded after its recompute (gpu's nightly, current now): results of
    5 files the run lacked, and its manifest listing 10 others as crashed."""
    from django.db import connection

    from parity.models import RunFile, RunFileState, Upload

    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT DISTINCT t.file FROM parity_testcase t
            WHERE t.project_id = %(project)s AND NOT EXISTS (
                SELECT 1 FROM parity_result r WHERE r.run_id = %(run)s AND r.test_id = t.id
            )
            ORDER BY t.file LIMIT 15
            """,
            {"project": run.project_id, "run": run.pk},
        )
        lacked = [row[0] for row in cursor.fetchall()]
        upload = Upload.objects.create(run=run, sha256=uuid.uuid4().hex * 2, size=0, status="done")
        cursor.execute(
            """
            INSERT INTO parity_result (run_id, upload_id, test_id, outcome, duration, message)
            SELECT %(run)s, %(upload)s, t.id, 1, 0.01, '' FROM parity_testcase t
            WHERE t.project_id = %(project)s AND t.file = ANY(%(files)s)
            """,
            {"run": run.pk, "upload": upload.pk, "project": run.project_id, "files": lacked[:5]},
        )
    RunFile.objects.bulk_create(
        RunFile(run=run, file=file, state=RunFileState.CRASHED, signal="SIGSEGV", upload=upload)
        for file in lacked[5:]
    )


def _process_cpu(pid: int) -> float:
    """User and system CPU seconds of a local process (the Postgres backend), from /proc; NaN
    where /proc cannot tell (another machine's server)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def report_write(directory: Path, cases: int) -> Path:
    """A gzipped pytest-style report of ``cases`` cases over files of 100 (the run's shape)."""
    from tests.e2e.generate import junit_write

    files = max(1, cases // TESTS_PER_FILE)
    classnames = tuple(f"test.dir_{f // 20}.test_{f}.TestF{f}" for f in range(min(files, 250)))
    xml = directory / f"report-{cases}.xml"
    junit_write(xml, cases=cases, classnames=classnames)
    path = directory / f"report-{cases}.xml.gz"
    with xml.open("rb") as source, gzip.open(path, "wb", compresslevel=6) as target:
        while chunk := source.read(1 << 20):
            target.write(chunk)
    xml.unlink()
    return path


def parse_timed(path: Path) -> tuple[float, float]:
    """The bare stdlib parse: iterparse over the gzipped stream, each element cleared. Its
    seconds and CPU seconds."""
    began, began_cpu = time.perf_counter(), time.process_time()
    count = 0
    with gzip.open(path) as stream:
        for _event, element in ElementTree.iterparse(stream, events=("end",)):
            if element.tag == "testcase":
                count += 1
                element.clear()
    assert count, path
    return time.perf_counter() - began, time.process_time() - began_cpu


def live_timed(stack, directory: Path, report: Path, *, first: bool) -> dict[str, float]:
    """Through gunicorn and the worker, from POST to ``GET …/parity/`` naming the run: the
    reference's first run, then another backend's first run, then the reference's next."""
    from bench.live import project_fresh
    from parity.models import Upload
    from tests.e2e.client import ApiClient

    project = project_fresh(f"bench-recompute-live-{uuid.uuid4().hex[:6]}")
    client = ApiClient(base_url=stack.base_url, token=project.token)
    if first:
        warm_up(client, directory, project=project.slug)
    seconds = {}
    for label, backend, run in (
        ("live: reference's first run", "cpu", "night-1"),
        ("live: other backend's first run", "tpu", "night-1"),
        ("live: reference's next run", "cpu", "night-2"),
    ):
        began = time.perf_counter()
        upload_id = upload_post(
            client, report, project=project.slug, run=run, backend=backend, complete="true"
        )
        run_id = Upload.objects.values_list("run_id", flat=True).get(pk=upload_id)
        while _current_run(client, project.slug, backend) != run_id:
            time.sleep(POLL_SECONDS)
        seconds[label] = time.perf_counter() - began
    return seconds


def _current_run(client, slug: str, backend: str) -> int | None:
    reply = client.request("GET", f"/api/v1/projects/{slug}/parity/")
    if reply.status != 200:
        raise SystemExit(f"parity/ answered {reply}")
    return next(b["run"] for b in reply.body["backends"] if b["backend"] == backend)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100k", help="of 10k, 100k, 1m (default 100k)")
    parser.add_argument("--live", default="100k", help="sizes also timed live ('' for none)")
    parser.add_argument("--rounds", type=int, default=3, help="best of this many rounds")
    parser.add_argument("--fresh", action="store_true", help="rebuild the bench projects")
    parser.add_argument(
        "--timeout", type=float, default=300, help="seconds a recompute's statement may run"
    )
    args = parser.parse_args()
    sizes = [s.strip().lower() for s in args.sizes.split(",") if s.strip()]
    live = {s.strip().lower() for s in args.live.split(",") if s.strip()} & set(sizes)
    django_setup()
    built = {label: project_build(label, SIZES[label], fresh=args.fresh) for label in sizes}
    best = {label: Best() for label in sizes}
    with tempfile.TemporaryDirectory() as tmp, _maybe_stack(Path(tmp), live) as stack:
        reports = {label: report_write(Path(tmp), SIZES[label]) for label in sizes}
        for number in range(args.rounds):
            for label in sizes:
                parse, parse_cpu = parse_timed(reports[label])
                best[label].parse = min(best[label].parse, parse)
                best[label].parse_cpu = min(best[label].parse_cpu, parse_cpu)
                seconds, cpu, statements = recomputes_timed(built[label], timeout=args.timeout)
                best[label].statements = statements
                best[label].keep(seconds, "recompute")
                best[label].keep(cpu, "postgres_cpu")
                if label in live:
                    figures = live_timed(stack, Path(tmp), reports[label], first=not number)
                    best[label].keep(figures, "live")
            print(f"round {number + 1} of {args.rounds} done", flush=True)
    met = []
    for label in sizes:
        met += _print_size(built[label], best[label], rounds=args.rounds)
    if "100k" in best and "1m" in best:
        met += _print_linear(best["100k"], best["1m"])
    print(f"targets met: {sum(met)} of {len(met)}")


def _maybe_stack(directory: Path, live: set[str]):
    import contextlib

    return live_stack(directory / "stack", concurrency=1) if live else contextlib.nullcontext()


def _print_size(built: Built, best: Best, *, rounds: int) -> list[bool]:
    parse = best.parse
    print(
        f"{built.label}: {built.tests:,} tests x {len(BACKENDS)} backends, best of {rounds}; "
        f"bare parse of the run's gzipped report {parse:.2f} s ({best.parse_cpu:.2f} s of CPU)"
    )
    met = []
    for name in SCENARIOS:
        seconds = best.recompute[name]
        ratio = seconds / parse
        value = f"{seconds:6.2f} s {ratio:5.2f}x" if ratio < float("inf") else "timed out"
        label = f"recompute, {name} ({best.statements[name]} stmts)"
        met.append(ratio <= GOAL)
        print(target_line(label, value, f"<= {GOAL:g}x parse (goal)", met[-1]))
        if built.tests == SIZES["100k"]:
            met.append(ratio <= FLOOR)
            print(target_line("", "", f"<= {FLOOR:g}x parse (floor)", met[-1]))
        cpu = best.postgres_cpu[name]
        print(f"    Postgres CPU {cpu:.2f} s, {cpu / best.parse_cpu:.2f}x the parse's CPU")
    for name, seconds in best.live.items():
        print(f"  {name:38} {seconds:6.2f} s {seconds / parse:5.2f}x   (ingest + recompute)")
    return met


def _print_linear(small: Best, large: Best) -> list[bool]:
    met = []
    for name in SCENARIOS:
        ratio = large.recompute[name] / small.recompute[name]
        met.append(ratio <= LINEAR)
        print(target_line(f"1m / 100k, {name}", f"{ratio:.1f}x", f"<= {LINEAR:g}x", met[-1]))
    return met


if __name__ == "__main__":
    main()
