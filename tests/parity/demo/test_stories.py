"""The demo's stories (``parity.demo.scenario.stories``), read back from the uploaded bytes of
its 28 days: gaps that open and close, tracked gaps whose real skip messages cite their issue, a
GPU shard that stops running and comes back, a real reason that appears for a week and goes, and
a file Neuron drops for good. Pure: no Django and no database."""

from __future__ import annotations

from typing import Any

from parity.demo.scenario import BACKENDS, ScenarioEvent, demo_events
from parity.demo.scenario.stories import GPU_TODO, PAUSED_SHARD, TEMPORARY_SKIP
from parity.pure.normalize import canonical_reason, extract_issue_refs
from tests.parity.demo.readback import DAYS, Key, passed, reason

Runs = dict[tuple[int, str], dict[Key, Any]]


def _key(event: ScenarioEvent) -> Key:
    return event.case.file, event.case.cls, event.case.name


def _transitions(seen: Runs, backend: str) -> tuple[set, set]:
    """Keys whose gap against CPU opens / closes between two days (CPU passing on both)."""
    opened, closed = set(), set()
    for day in range(1, DAYS):
        cpu_before, cpu_now = seen[(day - 1, "cpu")], seen[(day, "cpu")]
        before, now = seen[(day - 1, backend)], seen[(day, backend)]
        for key in cpu_now:
            if not (passed(cpu_before, key) and passed(cpu_now, key)):
                continue
            if passed(before, key) and not passed(now, key):
                opened.add((day, key))
            if key in before and not passed(before, key) and passed(now, key):
                closed.add((day, key))
    return opened, closed


def test_gaps_open_and_close(fixture: dict[str, Any], seen: Runs) -> None:
    transitions = {backend: _transitions(seen, backend) for backend in BACKENDS[1:]}
    for event in demo_events(fixture, days=DAYS):
        key, last = _key(event), seen[(DAYS - 1, event.backend)]
        opened, closed = transitions[event.backend]
        if event.kind == "opens":
            assert (event.day, key) in opened, event
            if event.until is None:
                assert last[key].status == event.outcome.status, event
            else:
                assert (event.until, key) in closed and passed(last, key), event
        elif event.kind == "closes":
            assert (event.day, key) in closed, event
            assert seen[(0, event.backend)][key].status == event.outcome.status
    assert all(opened and closed for opened, closed in transitions.values())


def _tracked_skips(seen: Runs, day: int) -> dict[str, dict[Key, list[str]]]:
    """Per backend, the tests CPU passes that it skips on ``day`` with a reason citing an issue
    (canonical reason as ingest stores it, issue keys as ingest links them)."""
    tracked: dict[str, dict[Key, list[str]]] = {}
    cpu = seen[(day, "cpu")]
    for backend in BACKENDS[1:]:
        for key, result in seen[(day, backend)].items():
            if result.status != "skipped" or not result.message or not passed(cpu, key):
                continue
            refs = extract_issue_refs(canonical_reason(result.message).text)
            if refs:
                tracked.setdefault(backend, {})[key] = [ref.key for ref in refs]
    return tracked


def test_tracked_gaps_skip_with_real_messages_that_cite_their_issue(
    fixture: dict[str, Any], seen: Runs
) -> None:
    last = _tracked_skips(seen, DAYS - 1)
    assert set(last) == {"tpu", "gpu"}
    issues = {issue for keys in last.values() for refs in keys.values() for issue in refs}
    assert issues == {"pytorch/xla#8974", "pytorch/xla#8975", "pytorch/xla#9017"}
    # TPU's are the real decorators of the very tests the data says TPU skips, verbatim.
    rows = {(row["file"], row["test_or_class"]): row for row in fixture["skips"]}
    for key in last["tpu"]:
        row = rows[(key[0], f"{key[1]}.{key[2]}")]
        assert "tpu" in row["backends"] and reason(seen[(DAYS - 1, "tpu")][key]) == row["reason"]
    # GPU's reuse GPU's real TODO message on tests of another file.
    assert {reason(seen[(DAYS - 1, "gpu")][key]) for key in last["gpu"]} == {GPU_TODO}
    # Some were there from the first day, the others open during the window.
    first = _tracked_skips(seen, 0)
    assert first and set(first.get("tpu", {})) < set(last["tpu"]) and "gpu" not in first


def test_a_gpu_shard_stops_running_then_runs_again(fixture: dict[str, Any], seen: Runs) -> None:
    """A coverage drop and its recovery: the shard's files are missing on days ``day`` to
    ``until - 1`` and present on every other day, and CPU runs them all along."""
    backend, shard = PAUSED_SHARD
    (paused,) = {
        (e.day, e.until) for e in demo_events(fixture, days=DAYS) if e.kind == "dropped" and e.until
    }
    first, until = paused
    files = {f for f, s in fixture["backends"][backend]["files"].items() if s == shard}
    assert 0 < first < until < DAYS and len(files) > 5
    counts = []
    for day in range(DAYS):
        present = {key[0] for key in seen[(day, backend)]} & files
        assert present == (set() if first <= day < until else files), day
        counts.append(len(seen[(day, backend)]))
    # More than the engine's 5% fewer tests on the first day (a coverage drop), all back after.
    assert counts[first] < 0.95 * counts[first - 1] and counts[until] == counts[first - 1]
    cpu_files = {key[0] for key in seen[(first, "cpu")]}
    shared = files & cpu_files
    assert len(shared) > len(files) // 2  # so parity against CPU dips too


def test_a_real_reason_appears_for_a_week_then_disappears(
    fixture: dict[str, Any], seen: Runs
) -> None:
    assert any(row["reason"] == TEMPORARY_SKIP for row in fixture["skips"])
    spell = [e for e in demo_events(fixture, days=DAYS) if e.outcome.message == TEMPORARY_SKIP]
    ((backend, first, until),) = {(e.backend, e.day, e.until) for e in spell}
    assert 0 < first < until < DAYS and len(spell) >= 3
    for day in range(DAYS):
        run, cpu = seen[(day, backend)], seen[(day, "cpu")]
        skipped = {k for k, result in run.items() if reason(result) == TEMPORARY_SKIP}
        assert skipped == ({_key(e) for e in spell} if first <= day < until else set()), day
        assert all(passed(cpu, key) for key in skipped)  # each is a gap while it lasts


def test_a_file_drops_out_of_neurons_list(fixture: dict[str, Any], seen: Runs) -> None:
    (drop,) = [e for e in demo_events(fixture, days=DAYS) if e.kind == "dropped" and not e.until]
    assert drop.backend == "neuron" and 0 < drop.day < DAYS

    def tests_of(day: int, backend: str) -> set[Key]:
        return {k for k in seen[(day, backend)] if k[0] == drop.case.file}

    assert tests_of(drop.day - 1, "neuron") and not tests_of(drop.day, "neuron")
    assert not tests_of(DAYS - 1, "neuron")
    assert tests_of(DAYS - 1, "cpu") >= tests_of(0, "neuron")  # still run on the reference


def test_stories_fit_a_short_window(fixture: dict[str, Any]) -> None:
    """``load_demo --days 3`` (the browser tests') still plays every story inside its days."""
    for days in (1, 3, 7):
        for event in demo_events(fixture, days=days):
            assert 0 <= event.day <= max(1, days - 1), (days, event)
            assert event.until is None or event.day < event.until, (days, event)


def test_only_other_backends_flake_for_a_day(seen: Runs) -> None:
    """CPU's outcomes never change (a failure there would close other backends' gaps for a
    day); the others have one-day failures now and then."""
    statuses = {key: result.status for key, result in seen[(0, "cpu")].items()}
    for day in range(DAYS):
        assert {k: r.status for k, r in seen[(day, "cpu")].items()} == statuses, day
    one_day = 0
    for backend in BACKENDS[1:]:
        for day in range(1, DAYS - 1):
            before, now, after = (seen[(d, backend)] for d in (day - 1, day, day + 1))
            one_day += sum(
                passed(before, k) and now[k].status == "failed" and passed(after, k) for k in now
            )
    assert one_day >= 5
