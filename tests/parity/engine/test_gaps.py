"""The gaps diff alone: current outcomes (set with the ORM) against the reference's become
open gaps, each saying which run opened and closed it, with an event for each change of state
between."""

from parity.engine.gaps import gaps_diff
from parity.models import Gap, GapEvent, Outcome
from tests.parity.engine.rows import backend_of, current_set, gap_history, open_gaps, run_make

A = "test/a.py::TestA::"
P, S, F, E = Outcome.PASSED, Outcome.SKIPPED, Outcome.FAILED, Outcome.ERROR
REF = {f"{A}t1": P, f"{A}t2": P, f"{A}t3": P, f"{A}t4": P, f"{A}t5": (S, "everywhere")}


def diff(project, cause, reference_run):
    tpu = backend_of(project, "tpu")
    return gaps_diff(
        project=project,
        backend_ids=[tpu.pk],
        reference_run_id=reference_run.pk if reference_run else None,
        cause=cause,
    ).counts


def events() -> set[tuple[str, str, str, str, int]]:
    """(test name, what, from state, to state, causing run) of every gap's story."""
    return {(key.rsplit("::", 1)[1], *rest) for _, key, *rest in gap_history()}


def test_gaps_open_for_each_way_a_backend_falls_short(project):
    cpu_run, tpu_run = run_make(project, "cpu"), run_make(project, "tpu")
    current_set(project, "cpu", REF, run=cpu_run)
    tpu = {f"{A}t1": P, f"{A}t2": (S, "later"), f"{A}t3": E, f"{A}t5": (S, "x"), f"{A}t6": P}
    current_set(project, "tpu", tpu, run=tpu_run)

    assert diff(project, tpu_run, cpu_run) == {"closed": 0, "changed": 0, "opened": 4}
    assert open_gaps() == {
        f"{A}t2": "skipped",
        f"{A}t3": "error",
        f"{A}t4": "missing",  # passes on the reference, absent here
        f"{A}t6": "reference_missing",  # runs here only
    }
    assert events() == {
        ("t2", "opened", "", "skipped", tpu_run.pk),
        ("t3", "opened", "", "error", tpu_run.pk),
        ("t4", "opened", "", "missing", tpu_run.pk),
        ("t6", "opened", "", "reference_missing", tpu_run.pk),
    }
    assert not GapEvent.objects.exists()  # opening is the gap row's own record


def test_a_later_diff_changes_and_closes_gaps_then_changes_nothing(project):
    cpu_run, day1 = run_make(project, "cpu"), run_make(project, "tpu")
    current_set(project, "cpu", REF, run=cpu_run)
    current_set(project, "tpu", {f"{A}t1": P, f"{A}t2": (S, "a"), f"{A}t3": (S, "b")}, run=day1)
    diff(project, day1, cpu_run)
    first = events()

    day2 = run_make(project, "tpu", day="2026-04-02")
    later = {f"{A}t1": P, f"{A}t2": F, f"{A}t3": (S, "b reworded"), f"{A}t4": P}
    current_set(project, "tpu", later, run=day2)

    assert diff(project, day2, cpu_run) == {"closed": 1, "changed": 1, "opened": 0}
    assert open_gaps() == {f"{A}t2": "failed", f"{A}t3": "skipped"}
    # t3's reason changed without its state: no event, but the gap names the new reason.
    assert events() - first == {
        ("t4", "closed", "missing", "", day2.pk),
        ("t2", "changed", "skipped", "failed", day2.pk),
    }
    assert Gap.objects.get(is_open=True, test__name="t3").reason.text == "b reworded"
    assert diff(project, day2, cpu_run) == {"closed": 0, "changed": 0, "opened": 0}


def test_without_a_reference_run_there_is_no_gap(project):
    cpu_run, tpu_run = run_make(project, "cpu"), run_make(project, "tpu")
    current_set(project, "cpu", REF, run=cpu_run)
    current_set(project, "tpu", {f"{A}t1": P}, run=tpu_run)
    diff(project, tpu_run, cpu_run)
    assert open_gaps()

    assert diff(project, tpu_run, None)["closed"] == 3
    assert open_gaps() == {}
