"""The events the demo plays: each a story the dashboard should tell, on the days given as a
share of the window so a shorter ``--days`` keeps every story in it (the package docstring lists
them with their days in the 28-day default)."""

from __future__ import annotations

import random
from collections.abc import Iterator
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
from parity.demo.scenario.events import REFERENCE, ScenarioEvent
from parity.demo.scenario.plan import Plan, plan_build, skip_outcome

# Real skip reasons of the fixture the stories reuse on other tests.
NOT_ON_NEURON = "Not supported on NEURON"
TEMPORARY_SKIP = "temporarily skipping this test until CI issue is resolved"
GPU_TODO = "TODO(https://github.com/pytorch/xla/issues/9017): Get these tests working on GPU"
# GPU's CI shard that does not run for a few days (a coverage drop, then its recovery).
PAUSED_SHARD = ("gpu", "run_xla_op_tests2")


def demo_events(fixture: dict[str, Any], *, days: int = 28) -> tuple[ScenarioEvent, ...]:
    """The scripted changes of a ``days``-day window, as ``demo_uploads`` plays them."""
    return events_build(
        fixture, {backend: plan_build(fixture, backend) for backend in BACKENDS}, days
    )


def events_build(
    fixture: dict[str, Any], plans: dict[str, Plan], days: int
) -> tuple[ScenarioEvent, ...]:
    """Each event gets its own file, so none masks another. Picked tests are drawn (seeded)
    among unittest-style tests that pass on both CPU and the backend at baseline, so each event
    is a real change of parity against the reference backend."""
    picker = _Picker(plans)
    # The stories bound to real rows or shards claim their files before any draw.
    tracked = tuple(_tracked_skips(fixture, plans, picker, days))
    paused = tuple(_shard_pause(plans, picker, days))
    return (
        *tracked,
        *paused,
        *_changes(fixture, picker, days),
        *_skip_spells(fixture, picker, days),
    )


def _tracked_skips(
    fixture: dict[str, Any], plans: dict[str, Plan], picker: _Picker, days: int
) -> Iterator[ScenarioEvent]:
    """Tracked gaps: the last of the cited skips lands during the window (its test passed
    until then), the others are there from the first day."""
    found = _cited_skips(fixture, plans)
    landing = max(1, days - 1 - days // 7)
    for number, (backend, case, outcome) in enumerate(found, 1):
        picker.reserve(case.file)
        if number < len(found):
            yield ScenarioEvent("chronic", backend, 0, case, outcome)
        else:
            yield ScenarioEvent("opens", backend, landing, case, outcome)


def _cited_skips(
    fixture: dict[str, Any], plans: dict[str, Plan]
) -> list[tuple[str, Case, Outcome]]:
    """(backend, test, skip) of each real skip whose message cites an issue, where a backend
    other than CPU skips a test CPU passes."""
    found = []
    for row in fixture["skips"]:
        if not row.get("issue_ref") or row["issue_ref"] not in row["reason"]:
            continue  # no issue, or one that only a comment near the skip names
        outcome = skip_outcome(row)
        for backend in BACKENDS[1:]:
            found += [
                (backend, case, outcome)
                for case, base in plans[backend].base.items()
                if base == outcome and plans[REFERENCE].base.get(case) == PASSED
            ]
    return found


def _shard_pause(plans: dict[str, Plan], picker: _Picker, days: int) -> Iterator[ScenarioEvent]:
    """A CI shard of a backend that does not run for a few days, then runs again."""
    backend, shard = PAUSED_SHARD
    first = max(1, 2 * days // 7)
    until = max(first + 1, 3 * days // 7)
    files: dict[str, Case] = {}
    for case in plans[backend].cases:
        if case.shard == shard:
            files.setdefault(case.file, case)  # the file's first case stands for the file
    for file, case in files.items():
        picker.reserve(file)
        yield ScenarioEvent("dropped", backend, first, case, PASSED, until=until)


def _changes(fixture: dict[str, Any], picker: _Picker, days: int) -> Iterator[ScenarioEvent]:
    """Gaps that open or close for good, chronic failures, and a file Neuron stops running."""
    script = (  # kind, backend, first day it applies (or stops applying), outcome
        ("opens", "tpu", max(1, days // 3), TENSOR_FAILURE),
        (
            "opens",
            "neuron",
            max(1, 2 * days // 3),
            Outcome("skipped", _real(fixture, NOT_ON_NEURON)),
        ),
        ("closes", "tpu", max(1, days // 5), SCALAR_FAILURE),
        ("closes", "gpu", max(1, days // 2 + 1), OOM_ERROR),
        ("chronic", "neuron", 0, OOM_ERROR),
        ("chronic", "neuron", 0, TENSOR_FAILURE),
        ("chronic", "gpu", 0, Outcome("failed", "False is not true", "AssertionError")),
    )
    yield ScenarioEvent("dropped", "neuron", days // 2, picker.cases("neuron", 5)[0], PASSED)
    for kind, backend, day, outcome in script:
        yield ScenarioEvent(kind, backend, day, picker.case(backend), outcome)


def _skip_spells(fixture: dict[str, Any], picker: _Picker, days: int) -> Iterator[ScenarioEvent]:
    """Real reasons that start skipping a few tests of one file: on TPU for a week, then gone
    (a reason appears and disappears); on GPU for good, citing its issue (tracked gaps that
    open during the window). Six tests for a week rank among TPU's largest reasons, so its
    skip-reason chart draws the spell rather than folding it into "other"."""
    first = max(1, days // 5)
    spells = (  # backend, tests, reason, first day, first day without it
        ("tpu", 6, TEMPORARY_SKIP, first, first + max(1, days // 4)),
        ("gpu", 2, GPU_TODO, max(1, 3 * days // 4), None),
    )
    for backend, count, reason, day, until in spells:
        outcome = Outcome("skipped", _real(fixture, reason))
        for case in picker.cases(backend, count):
            yield ScenarioEvent("opens", backend, day, case, outcome, until=until)


def _real(fixture: dict[str, Any], reason: str) -> str:
    """``reason``, once the fixture's skips show it is real."""
    if not any(row["reason"] == reason for row in fixture["skips"]):
        raise LookupError(f"no skip row of the fixture says {reason!r}")
    return reason


class _Picker:
    """Seeded draws of event tests, never two events on one file."""

    def __init__(self, plans: dict[str, Plan]) -> None:
        self.plans = plans
        self.rng = random.Random(f"{SEED}:events")
        self.used: set[str] = set()

    def reserve(self, file: str) -> None:
        self.used.add(file)

    def _candidates(self, backend: str) -> list[Case]:
        plan, reference = self.plans[backend], self.plans[REFERENCE].base
        return [
            case
            for case in plan.cases
            if case.dialect in ("unittest", "run_tests")
            and case.file not in self.used
            and plan.base[case] == PASSED
            and reference.get(case) == PASSED
        ]

    def case(self, backend: str) -> Case:
        case = self.rng.choice(self._candidates(backend))
        self.reserve(case.file)
        return case

    def cases(self, backend: str, count: int) -> list[Case]:
        """``count`` such tests of one file (the first of a file with at least that many)."""
        per_file: dict[str, list[Case]] = {}
        for case in self._candidates(backend):
            per_file.setdefault(case.file, []).append(case)
        files = sorted(f for f, cases in per_file.items() if len(cases) >= count)
        chosen = self.rng.choice(files)
        self.reserve(chosen)
        return per_file[chosen][:count]
