"""Roll-ups that miss their current run are found and recomputed by the beat task."""

from parity import tasks
from parity.engine import stale_current_runs
from parity.models import BackendState, Gap, Run

T = "test/a.py::TestA::"
CPU = {f"{T}test_1": "passed", f"{T}test_2": "passed"}
DAY1, DAY2 = "2026-04-01", "2026-04-02"


def test_a_lost_run_completed_message_is_found_and_recomputed(upload_run):
    upload_run("cpu", CPU, day=DAY1)
    upload_run("tpu", CPU, day=DAY1)
    assert stale_current_runs() == []
    # The run completes, but its recompute message is lost (an update, no task queued).
    late = upload_run("tpu", {f"{T}test_1": "passed"}, day=DAY2, complete=False)
    Run.objects.filter(pk=late).update(complete=True)

    assert [run.pk for run in stale_current_runs()] == [late]
    tasks.rollups_verify()

    assert BackendState.objects.get(backend__name="tpu").current_run_id == late
    gaps = Gap.objects.filter(backend__name="tpu", is_open=True)
    assert list(gaps.values_list("test__key", "state")) == [(f"{T}test_2", "missing")]
    assert stale_current_runs() == []


def test_a_late_shard_whose_recompute_was_lost_is_found(upload_run):
    run = upload_run("tpu", {f"{T}test_1": "passed"}, day=DAY1, run="nightly")
    state = BackendState.objects.get(backend__name="tpu")
    # A shard finishes after the state was computed, and its recompute never ran.
    BackendState.objects.filter(pk=state.pk).update(
        computed_at=state.computed_at.replace(year=2000)
    )

    assert [r.pk for r in stale_current_runs()] == [run]
    tasks.rollups_verify()
    assert stale_current_runs() == []
