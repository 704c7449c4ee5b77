"""What changes over the days: scripted events, and a seeded one-day failure now and then."""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from parity.demo.scenario.cases import (
    BACKENDS,
    OOM_ERROR,
    PASSED,
    SCALAR_FAILURE,
    SEED,
    TENSOR_FAILURE,
    Case,
    Outcome,
)
from parity.demo.scenario.plan import Plan, plan_build

FLAKY_CHANCE = 0.35


@dataclass(frozen=True)
class ScenarioEvent:
    """A scripted change. ``opens``: from ``day`` on, the case has ``outcome`` on ``backend``
    (it passed before, as on CPU). ``closes``: before ``day`` it had ``outcome``, then passes.
    ``chronic``: ``outcome`` every day. ``dropped``: from ``day`` on, the backend no longer
    runs ``case.file`` at all (its tests go missing)."""

    kind: str  # opens | closes | chronic | dropped
    backend: str
    day: int  # index into the run of days, 0 = first
    case: Case
    outcome: Outcome


def demo_events(fixture: dict[str, Any], *, days: int = 28) -> tuple[ScenarioEvent, ...]:
    """The scripted changes of a ``days``-day window, as ``demo_uploads`` plays them."""
    return events_build(
        fixture, {backend: plan_build(fixture, backend) for backend in BACKENDS}, days
    )


def events_build(
    fixture: dict[str, Any], plans: dict[str, Plan], days: int
) -> tuple[ScenarioEvent, ...]:
    """Each event gets its own file, so none masks another. Tests are drawn (seeded) among
    unittest-style tests that pass on both CPU and the backend at baseline, so each event is
    a real change of parity against the reference backend."""
    neuron_reason = next(
        row["reason"] for row in fixture["skips"] if row["reason"] == "Not supported on NEURON"
    )
    script = (  # kind, backend, first day it applies (or stops applying), outcome
        ("opens", "tpu", max(1, days // 3), TENSOR_FAILURE),
        ("opens", "neuron", max(1, 2 * days // 3), Outcome("skipped", neuron_reason)),
        ("closes", "tpu", max(1, days // 5), SCALAR_FAILURE),
        ("closes", "gpu", max(1, days // 2 + 1), OOM_ERROR),
        ("chronic", "neuron", 0, OOM_ERROR),
        ("chronic", "neuron", 0, TENSOR_FAILURE),
        ("chronic", "gpu", 0, Outcome("failed", "False is not true", "AssertionError")),
    )
    picker = _Picker(plans)
    dropped = ScenarioEvent("dropped", "neuron", days // 2, picker.file("neuron"), PASSED)
    return dropped, *(
        ScenarioEvent(kind, backend, day, picker.case(backend), outcome)
        for kind, backend, day, outcome in script
    )


class _Picker:
    """Seeded draws of event tests, never two on one file."""

    def __init__(self, plans: dict[str, Plan]) -> None:
        self.plans = plans
        self.rng = random.Random(f"{SEED}:events")
        self.used: set[str] = set()

    def _candidates(self, backend: str) -> list[Case]:
        plan, cpu = self.plans[backend], self.plans["cpu"].base
        return [
            case
            for case in plan.cases
            if case.dialect in ("unittest", "run_tests")
            and case.file not in self.used
            and plan.base[case] == PASSED
            and cpu.get(case) == PASSED
        ]

    def case(self, backend: str) -> Case:
        case = self.rng.choice(self._candidates(backend))
        self.used.add(case.file)
        return case

    def file(self, backend: str) -> Case:
        """A file with at least 5 such tests; the returned case stands for the whole file."""
        per_file: dict[str, list[Case]] = {}
        for case in self._candidates(backend):
            per_file.setdefault(case.file, []).append(case)
        files = sorted(f for f, cases in per_file.items() if len(cases) >= 5)
        chosen = self.rng.choice(files)
        self.used.add(chosen)
        return per_file[chosen][0]


def day_results(
    plan: Plan, events: Iterable[ScenarioEvent], backend: str, index: int
) -> list[tuple[Case, Outcome]]:
    """Every case a backend reports on day ``index``, with the outcome the events give it."""
    dropped: set[str] = set()
    outcomes = dict(plan.base)
    for event in events:
        if event.backend != backend:
            continue
        if event.kind == "dropped" and index >= event.day:
            dropped.add(event.case.file)
        elif (
            event.kind == "chronic"
            or (event.kind == "opens" and index >= event.day)
            or (event.kind == "closes" and index < event.day)
        ):
            outcomes[event.case] = event.outcome
    flaky = _flaky_case(plan, backend, index, {event.case for event in events})
    if flaky is not None:
        outcomes[flaky] = TENSOR_FAILURE
    return [(case, outcomes[case]) for case in plan.cases if case.file not in dropped]


def _flaky_case(plan: Plan, backend: str, index: int, exclude: set[Case]) -> Case | None:
    """About one day in three, one otherwise passing test fails once (then passes again)."""
    rng = random.Random(f"{SEED}:flaky:{backend}:{index}")
    if rng.random() >= FLAKY_CHANCE:
        return None
    pool = [c for c in plan.cases if plan.base[c] == PASSED and c not in exclude]
    return rng.choice(pool)
