"""What changes over the days, as events, and how a day's results follow from them; a seeded
one-day failure now and then on top. Which events the demo plays is ``stories``."""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass

from parity.demo.scenario.cases import BACKENDS, PASSED, SEED, TENSOR_FAILURE, Case, Outcome
from parity.demo.scenario.plan import Plan

FLAKY_CHANCE = 0.35
REFERENCE = BACKENDS[0]


@dataclass(frozen=True)
class ScenarioEvent:
    """A scripted change of one case (or file) on one backend.

    ``opens``: on days ``day`` to ``until - 1`` (to the last day when ``until`` is None) the
    case has ``outcome``; on the other days it passes, as on CPU. ``closes``: before ``day`` it
    had ``outcome``, then passes. ``chronic``: ``outcome`` every day. ``dropped``: on days
    ``day`` to ``until - 1`` the backend does not run ``case.file`` at all (its tests go
    missing); with ``until`` it runs it again from that day on."""

    kind: str  # opens | closes | chronic | dropped
    backend: str
    day: int  # index into the run of days, 0 = first
    case: Case
    outcome: Outcome
    until: int | None = None  # opens, dropped: the first day it no longer applies

    def applies_on(self, index: int) -> bool:
        if self.kind == "chronic":
            return True
        if self.kind == "closes":
            return index < self.day
        return self.day <= index and (self.until is None or index < self.until)


def day_results(
    plan: Plan, events: Iterable[ScenarioEvent], backend: str, index: int
) -> list[tuple[Case, Outcome]]:
    """Every case a backend reports on day ``index``, with the outcome the events give it."""
    dropped: set[str] = set()
    outcomes = dict(plan.base)
    for event in events:
        if event.backend != backend:
            continue
        applies = event.applies_on(index)
        if event.kind == "dropped":
            if applies:
                dropped.add(event.case.file)
        else:
            # An event's case passes whenever its event does not apply, even one whose real
            # skip is its baseline (a decorator that lands during the window).
            outcomes[event.case] = event.outcome if applies else PASSED
    flaky = _flaky_case(plan, backend, index, {event.case for event in events})
    if flaky is not None:
        outcomes[flaky] = TENSOR_FAILURE
    return [(case, outcomes[case]) for case in plan.cases if case.file not in dropped]


def _flaky_case(plan: Plan, backend: str, index: int, exclude: set[Case]) -> Case | None:
    """About one day in three, one otherwise passing test of a backend other than the
    reference fails once (then passes again). The reference does not flake: a test failing
    there closes, for a day, every gap other backends have on it, which reads as a fix."""
    rng = random.Random(f"{SEED}:flaky:{backend}:{index}")
    if backend == REFERENCE or rng.random() >= FLAKY_CHANCE:
        return None
    pool = [c for c in plan.cases if plan.base[c] == PASSED and c not in exclude]
    return rng.choice(pool)
