"""A recompute as a declared list of steps (``parity.engine.recompute.STEPS``), run in order.

Each step names the temporary tables (``parity.engine.temp_tables``) it reads and writes, so the
hand-offs between modules are written down where the order is: the tests check that a step
reads only what an earlier step of its list wrote, and that the SQL it runs names no other.
After the steps, one catalog query checks that every table they say they wrote exists (each
lives until the transaction ends). Each step's time goes to the log as ``DONE <step> (<ms>ms)``
(as zulip's analytics log theirs).
"""

import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection

from parity.plans import hash_joins

logger = logging.getLogger("parity.engine")


@dataclass(frozen=True)
class Step:
    name: str
    run: Callable[[Any], None]  # given the recompute's state (``recompute.Recompute``)
    reads: tuple[str, ...] = ()  # temporary tables an earlier step wrote
    writes: tuple[str, ...] = ()  # temporary tables it creates or adds rows to
    scratch: tuple[str, ...] = ()  # temporary tables it makes and reads itself, alone
    # Planned with hash joins only (``plans.hash_joins``); consecutive such steps share the
    # settings, set once before the first and reset after the last.
    hash_joins: bool = False


class StepWritesMissing(AssertionError):
    """Steps ran without leaving a temporary table they declare: the declarations drifted."""


_MISSING_SQL = "SELECT t FROM unnest(%s::text[]) t WHERE to_regclass('pg_temp.' || t) IS NULL"


def steps_run(state: Any, steps: Sequence[Step]) -> None:
    """Run ``steps`` in order on ``state``, each timed in the log, then check their writes."""
    with contextlib.ExitStack() as planned:
        hashed = False
        for step in steps:
            if step.hash_joins != hashed:
                if hashed:
                    planned.close()
                else:
                    planned.enter_context(hash_joins(planned.enter_context(connection.cursor())))
                hashed = step.hash_joins
            started = time.monotonic()
            step.run(state)
            _done(step, started)
    _writes_check(steps)


def _done(step: Step, started: float) -> None:
    logger.info("DONE %s (%dms)", step.name, (time.monotonic() - started) * 1000)


def _writes_check(steps: Sequence[Step]) -> None:
    declared = {table: step.name for step in reversed(steps) for table in step.writes}
    if not declared:
        return
    with connection.cursor() as cursor:
        cursor.execute(_MISSING_SQL, [sorted(declared)])
        missing = [f"{declared[row[0]]} left no {row[0]}" for row in cursor.fetchall()]
    if missing:
        raise StepWritesMissing("; ".join(missing))
