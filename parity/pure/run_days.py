"""The UTC day a run's id names, and the range of ids that day's runs take.

A run's id is its day (days since 1970-01-01, UTC, when parity received it) shifted left by
``DAY_SHIFT`` bits, plus a sequence number (the database's ``parity_run_id_next()``). So one
day's runs take one range of ids, and their results one partition of the results table, which
beat can create ahead without asking anyone which ids the day will use. Runs created before the
ids named days have ids below ``1 << DAY_SHIFT``: day 0.
"""

import datetime

DAY_SHIFT = 32
EPOCH = datetime.date(1970, 1, 1)


def run_day(run_id: int) -> int:
    return run_id >> DAY_SHIFT


def day_of(when: datetime.date) -> int:
    return (when - EPOCH).days


def day_date(day: int) -> datetime.date:
    return EPOCH + datetime.timedelta(days=day)


def day_bounds(day: int) -> tuple[int, int]:
    """The run ids of ``day``: from the first, to the next day's first (excluded)."""
    return day << DAY_SHIFT, (day + 1) << DAY_SHIFT


def partition_name(table: str, day: int) -> str:
    """``parity_result_p20261205``: the table's partition of ``day``'s runs."""
    return f"{table}_p{day_date(day):%Y%m%d}"


def partition_day(table: str, name: str) -> int | None:
    """The day of a partition named by ``partition_name``; None for any other name."""
    prefix = f"{table}_p"
    if not name.startswith(prefix):
        return None
    try:
        return day_of(datetime.datetime.strptime(name[len(prefix) :], "%Y%m%d").date())
    except ValueError:
        return None
