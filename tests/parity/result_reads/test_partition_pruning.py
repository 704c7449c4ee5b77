"""Every read of results reads only the partitions of the runs it names (issue 37).

Results and file seconds have a partition a day (``parity.storage.partitions``). A read that
names its runs by value is pruned when planned; one that finds them in a join is pruned as it
runs only when the join probes them one at a time (a nested loop), never through a hash join,
which scans every partition. So each statement the engine and the pages run against those
tables is run again under ``EXPLAIN ANALYZE`` (in a savepoint rolled back), with 30 day
partitions present, and no statement may read a partition of a day where none of its runs
lives.
"""

import datetime
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import sqlparse
from django.db import connection
from django.urls import reverse

from parity.models import Result, Run, TestCase
from parity.pure.run_days import day_of, partition_day, run_day
from parity.storage import partitions

T = "test/a.py::TestA::"
PARTITION = re.compile(r"\b(parity_result|parity_fileseconds)\b")
DAYS_PRESENT = 30
# What EXPLAIN takes (a temporary table made AS a query too); DDL and COPY are no reads.
EXPLAINABLE = re.compile(
    r"\s*(SELECT|WITH|INSERT|UPDATE|DELETE|CREATE TEMP TABLE .* AS)\b", re.I | re.S
)


@dataclass
class Explained:
    statements: int = 0
    # (statement, table, day) for every day partition a statement read
    reads: list[tuple[str, str, int]] = field(default_factory=list)

    def days_read(self) -> set[int]:
        return {day for _, _, day in self.reads}


def _scanned(plan: dict) -> Iterator[str]:
    """Relations a plan node (and its children) actually read: a node the executor pruned at
    run time shows zero loops."""
    if plan.get("Relation Name") and plan.get("Actual Loops", 0) > 0:
        yield plan["Relation Name"]
    for child in plan.get("Plans", []):
        yield from _scanned(child)


def _explain(cursor, statement: str, explained: Explained) -> None:
    parts = [part.strip().rstrip(";") for part in sqlparse.split(statement) if part.strip()]
    for i, part in enumerate(parts):
        if not PARTITION.search(part) or not EXPLAINABLE.match(part):
            continue
        cursor.execute("SAVEPOINT pruning")
        try:
            for before in parts[:i]:
                cursor.execute(before)
            cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {part}")
            value = cursor.fetchone()[0]
            (plan,) = json.loads(value) if isinstance(value, str) else value
        finally:
            cursor.execute("ROLLBACK TO SAVEPOINT pruning")
        explained.statements += 1
        for name in _scanned(plan["Plan"]):
            for table in ("parity_result", "parity_fileseconds"):
                day = partition_day(table, name)
                if day is not None:
                    explained.reads.append((part, table, day))


@contextmanager
def explaining() -> Iterator[Explained]:
    """Explain each statement against results or file seconds before it runs."""
    explained = Explained()

    def wrapper(execute, sql, params, many, context):
        cursor = context["cursor"].cursor  # psycopg2's, under Django's wrappers
        text = sql if isinstance(sql, str) else sql.as_string(cursor)
        if not many and PARTITION.search(text):
            statement = cursor.mogrify(text, params).decode()
            _explain(cursor.connection.cursor(), statement, explained)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(wrapper):
        yield explained


def test_engine_and_page_reads_of_results_prune_to_their_runs_days(
    upload_run, run_day_clock, client, xla
):
    today = day_of(datetime.datetime.now(datetime.UTC).date())
    partitions.partitions_ensure(days=range(today - DAYS_PRESENT + 1, today + 1))
    days = {"2026-01-01": today - 20, "2026-01-02": today - 10, "2026-01-03": today - 1}
    cases = {f"{T}test_{i}": "passed" for i in range(20)}
    tpu_cases = {**cases, f"{T}test_3": ("skipped", "no tpu"), f"{T}test_4": ("failed", "boom")}

    with explaining() as engine:
        for ci_day, day in days.items():
            run_day_clock(day)
            upload_run("cpu", cases, day=ci_day)
            upload_run("tpu", tpu_cases, day=ci_day, complete=False)
            run = upload_run("tpu", {f"{T}test_late": "passed"}, day=ci_day, name="late.xml")
        # A shard of the current run after it completed: the late shard's recompute.
        upload_run("tpu", {f"{T}test_later": ("failed", "late")}, day=ci_day, name="later.xml")
    run_ids = sorted(Run.objects.values_list("pk", flat=True))
    assert {run_day(run_id) for run_id in run_ids} == set(days.values())
    assert engine.statements >= 10
    assert engine.days_read() <= set(days.values()), _misread(engine, days)

    test = TestCase.objects.get(key=f"{T}test_3")
    pages = [
        reverse("project-run", args=[xla.slug, run]),
        reverse("project-test", args=[xla.slug, test.pk]),
        reverse("project-gaps", args=[xla.slug]) + "?aligned=1",
        reverse("project", args=[xla.slug]) + "?aligned=1",
        reverse("test-detail", args=[xla.slug, test.pk]),
        reverse("run-verdict", args=[run]),
    ]
    for page in pages:
        with explaining() as read:
            response = client.get(page)
        assert response.status_code == 200, page
        assert read.statements >= 1, page
        # The run's day and, for its verdict or history, the days of the runs it compares.
        assert read.days_read() <= set(days.values()), _misread(read, days)
        assert len(read.days_read()) < len(days) + 1
    assert Result.objects.filter(run_id=run).exists()


def _misread(explained: Explained, days: dict[str, int]) -> str:
    wrong = [(table, day, part[:300]) for part, table, day in explained.reads]
    wrong = [w for w in wrong if w[1] not in days.values()]
    return "read partitions of days without its runs:\n" + "\n".join(map(str, wrong[:5]))


def test_a_hash_join_with_a_table_of_runs_is_caught(run_day_clock, upload_run):
    """The check itself: a read that finds its runs by a join reads every day's partition."""
    today = day_of(datetime.datetime.now(datetime.UTC).date())
    partitions.partitions_ensure(days=range(today - DAYS_PRESENT + 1, today + 1))
    run_day_clock(today - 3)
    run = upload_run("cpu", {f"{T}test_1": "passed"}, day="2026-01-01")
    with explaining() as read, connection.cursor() as cursor:
        cursor.execute("CREATE TEMP TABLE runs_wanted AS SELECT %s::bigint AS id", [run])
        cursor.execute("SET LOCAL enable_nestloop = off")
        cursor.execute("SELECT count(*) FROM parity_result r JOIN runs_wanted w ON w.id = r.run_id")
        assert cursor.fetchone() == (1,)
    assert len(read.days_read()) >= DAYS_PRESENT


def test_a_day_gets_its_partition_when_its_first_upload_is_written(run_day_clock, upload_run):
    """A missed beat loses no upload: the writer creates the day it needs."""
    later = day_of(datetime.datetime.now(datetime.UTC).date()) + 5
    assert later not in partitions.partitions_list()
    run_day_clock(later)
    run = upload_run("cpu", {f"{T}test_1": "passed"}, day="2026-01-01")
    assert run_day(run) == later and later in partitions.partitions_list()
    assert Result.objects.filter(run_id=run).count() == 1
