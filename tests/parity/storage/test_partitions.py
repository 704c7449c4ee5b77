"""The day partitions of results: created ahead by beat, once, and without leaving the caller's
transaction a lock timeout it did not ask for."""

import datetime

from django.db import connection, transaction

from parity.models import FileSeconds
from parity.pure.run_days import day_bounds, day_of, partition_name
from parity.storage import partitions
from parity.tasks import partitions_create

NOW = datetime.datetime(2027, 3, 1, 23, 30, tzinfo=datetime.UTC)


def test_beat_creates_today_and_the_days_ahead_once(settings, db):
    settings.PARITY_PARTITIONS_AHEAD_DAYS = 2
    today = day_of(NOW.date())

    created = partitions.partitions_create_ahead(now=NOW)

    assert created == [
        partition_name(table, day)
        for table in ("parity_result", "parity_fileseconds")
        for day in (today, today + 1, today + 2)
    ]
    assert {today, today + 1, today + 2} <= set(partitions.partitions_list(model=FileSeconds))
    assert partitions.partitions_create_ahead(now=NOW) == []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_get_expr(c.relpartbound, c.oid) FROM pg_class c WHERE c.relname = %s",
            [partition_name("parity_result", today)],
        )
        low, high = day_bounds(today)
        assert cursor.fetchone()[0] == f"FOR VALUES FROM ('{low}') TO ('{high}')"
    partitions._ensured.clear()


def test_the_beat_task_runs(db):
    partitions_create.delay()  # eager in tests: today's exist since the migration
    today = day_of(datetime.datetime.now(datetime.UTC).date())
    assert today in partitions.partitions_list()


def test_ensuring_a_day_inside_a_transaction_leaves_its_lock_timeout_alone(db):
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL lock_timeout = '42s'")
        partitions.partitions_ensure(days=[day_of(NOW.date()) + 40])
        cursor.execute("SHOW lock_timeout")
        assert cursor.fetchone()[0] == "42s"
    partitions._ensured.clear()
