"""Stable, seeded durations for each case, and the time each file's run began."""

from __future__ import annotations

import datetime
import hashlib
from dataclasses import dataclass

from parity.demo.scenario.cases import Case, Outcome


@dataclass(frozen=True)
class Timed:
    case: Case
    outcome: Outcome
    seconds: float
    file_start: datetime.datetime


def timed(
    results: list[tuple[Case, Outcome]], start: datetime.datetime, backend: str, day: datetime.date
) -> list[Timed]:
    """Give each case a stable duration and each file the time its run began."""
    items, clock, current = [], start, None
    file_start = start
    for case, outcome in results:
        if case.file != current:
            current, file_start = case.file, clock
        seconds = _seconds(backend, case, outcome, day)
        clock += datetime.timedelta(seconds=seconds)
        items.append(Timed(case, outcome, seconds, file_start))
    return items


def _seconds(backend: str, case: Case, outcome: Outcome, day: datetime.date) -> float:
    if outcome.status == "skipped":
        return 0.001
    # Stable per test and backend (0.01 s to 5 s; whole scripts 20x), +-15 % from day to day.
    base = 0.01 * 500 ** _fraction(backend, case.file, case.cls, case.name)
    if case.dialect in ("script", "missing"):
        base *= 20
    return round(base * (0.85 + 0.3 * _fraction(case.file, case.name, day.isoformat())), 3)


def _fraction(*parts: str) -> float:
    digest = hashlib.blake2b("\x1f".join(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64
