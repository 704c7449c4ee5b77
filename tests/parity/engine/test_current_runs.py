"""Which run is current, and when gaps are (not) computed: shards, incomplete runs, other
branches, late runs, the quiet period, and recomputes that run twice."""

import datetime
import io

from django.core.management import call_command
from django.utils import timezone

from parity import tasks
from parity.engine import parity_recompute
from parity.models import BackendState, Gap, GapEvent, PendingTest, Run, Upload
from tests.parity.conftest import utc
from tests.parity.engine.rows import gap_history

A = "test/a.py::TestA::"
T1, T2, T3, T4 = (f"{A}test_{n}" for n in range(1, 5))
CPU = {T1: "passed", T2: "passed", T3: "passed", T4: "passed"}
DAY1, DAY2 = "2026-04-01", "2026-04-02"


def open_gaps(backend: str = "tpu") -> dict[str, str]:
    gaps = Gap.objects.filter(backend__name=backend, is_open=True)
    return dict(gaps.values_list("test__key", "state"))


def pending_tests() -> list[tuple[str, str]]:
    return sorted(PendingTest.objects.values_list("backend__name", "test__key"))


def test_an_incomplete_sharded_run_never_produces_missing_gaps(upload_run, api):
    upload_run("cpu", CPU, day=DAY1)
    shard1 = upload_run(
        "tpu", {T1: "passed", T2: ("skipped", "later")}, day=DAY1, run="nightly", complete=False
    )

    assert open_gaps() == {}  # not complete: not current, nothing compared yet
    verdict = api.get(f"/api/v1/runs/{shard1}/verdict/").json()
    assert [(g["test"], g["state"]) for g in verdict["gaps"]] == [(T2, "skipped")]
    assert (verdict["complete"], verdict["coverage_drop"]) == (False, False)

    shard2 = upload_run("tpu", {T3: "passed"}, day=DAY1, run="nightly", name="shard2.xml")
    assert shard2 == shard1
    assert open_gaps() == {T2: "skipped", T4: "missing"}

    # The next night's first shard alone changes nothing: the complete run stays current.
    upload_run("tpu", {T1: "passed"}, day=DAY2, run="nightly-2", complete=False)
    assert open_gaps() == {T2: "skipped", T4: "missing"}
    tpu = api.get("/api/v1/projects/pytorch-xla/parity/").json()["backends"][3]
    assert (tpu["backend"], tpu["run"], tpu["complete"]) == ("tpu", shard1, True)


def test_runs_of_other_branches_and_late_runs_do_not_become_current(upload_run):
    upload_run("cpu", CPU, day=DAY1)
    day2 = upload_run("tpu", {**CPU, T4: ("failed", "boom")}, day=DAY2)
    upload_run("tpu", CPU, day=DAY2, branch="pr-17")
    late = upload_run("tpu", CPU, day=DAY1)  # an older night, uploaded after

    assert BackendState.objects.get(backend__name="tpu").current_run_id == day2
    assert open_gaps() == {T4: "failed"}
    assert late != day2


def test_a_run_with_no_branch_counts_as_the_default_branch(upload_run):
    upload_run("cpu", CPU, day=DAY1, branch="")
    upload_run("tpu", {T1: "passed"}, day=DAY1, branch="")

    assert open_gaps() == {T2: "missing", T3: "missing", T4: "missing"}


def test_recomputing_a_current_run_again_changes_nothing(upload_run):
    upload_run("cpu", CPU, day=DAY1)
    run = upload_run("tpu", {T1: "passed", T2: ("skipped", "later")}, day=DAY1)
    before = (open_gaps(), gap_history(), BackendState.objects.get(backend__name="tpu"))

    assert parity_recompute(run=Run.objects.get(pk=run)) is not None
    after = (open_gaps(), gap_history(), BackendState.objects.get(backend__name="tpu"))
    assert before[:2] == after[:2]
    assert (after[2].current_run_id, after[2].previous_run_id) == (run, None)


def test_a_new_reference_run_recomputes_every_backend(upload_run):
    upload_run("cpu", {T1: "passed", T2: "passed"}, day=DAY1)
    upload_run("tpu", {T1: "passed", T2: "passed", T3: ("skipped", "later")}, day=DAY1)
    upload_run("gpu", {T1: "passed", T2: "passed"}, day=DAY1)
    assert (open_gaps("tpu"), open_gaps("gpu")) == ({T3: "reference_missing"}, {})

    cpu2 = upload_run("cpu", CPU, day=DAY2)

    # T3 and T4 are new on the reference's day-2 run: the day-1 runs lacking them have not
    # been asked to run them yet (pending, no gap); tpu's T3 was compared as soon as cpu had it.
    assert open_gaps("tpu") == {T3: "skipped"}
    assert open_gaps("gpu") == {}
    assert pending_tests() == [("gpu", T3), ("gpu", T4), ("tpu", T4)]
    caused = {story[:5] for story in gap_history() if story[5] == cpu2}
    assert caused == {("tpu", T3, "changed", "reference_missing", "skipped")}
    changes = GapEvent.objects.filter(run_id=cpu2)
    assert {t.isoformat().replace("+00:00", "Z") for t in changes.values_list("at", flat=True)} == {
        utc(DAY2)
    }

    gpu2 = upload_run("gpu", {T1: "passed", T2: "passed"}, day=DAY2)

    assert open_gaps("gpu") == {T3: "missing", T4: "missing"}
    assert pending_tests() == [("tpu", T4)]
    caused = {story[:5] for story in gap_history() if story[5] == gpu2}
    assert caused == {("gpu", T3, "opened", "", "missing"), ("gpu", T4, "opened", "", "missing")}
    opened = Gap.objects.filter(opened_run_id=gpu2).values_list("opened_at", flat=True)
    assert {t.isoformat().replace("+00:00", "Z") for t in opened} == {utc(DAY2)}


def test_quiet_runs_are_completed_by_the_sweep(
    upload_run, settings, django_capture_on_commit_callbacks
):
    settings.PARITY_RUN_QUIET_MINUTES = 120
    upload_run("cpu", CPU, day=DAY1)
    quiet = upload_run("tpu", {T1: "passed"}, day=DAY1, run="quiet", complete=False)
    recent = upload_run("gpu", {T1: "passed"}, day=DAY1, run="recent", complete=False)
    hours_ago = timezone.now() - datetime.timedelta(hours=3)
    Upload.objects.filter(run_id=quiet).update(finished_at=hours_ago)

    with django_capture_on_commit_callbacks(execute=True):
        tasks.runs_complete_quiet.delay()

    assert Run.objects.get(pk=quiet).complete and not Run.objects.get(pk=recent).complete
    assert open_gaps("tpu") == {T2: "missing", T3: "missing", T4: "missing"}
    assert open_gaps("gpu") == {}


def test_the_sweep_leaves_runs_whose_uploads_all_failed(ingest, xla):
    response = ingest(("broken.xml", b"<testsuite><testcase name='a'>"), backend="tpu")
    run_id = response.json()["run"]
    Upload.objects.filter(run_id=run_id).update(
        finished_at=timezone.now() - datetime.timedelta(days=1)
    )

    assert tasks.runs_complete_quiet.delay() is not None
    assert not Run.objects.get(pk=run_id).complete


def test_recompute_parity_rebuilds_after_the_reference_changes(upload_run, xla):
    upload_run("cpu", {T1: "passed", T2: "passed"}, day=DAY1)
    upload_run("tpu", {T1: "passed", T2: ("skipped", "later"), T3: "passed"}, day=DAY1)
    assert open_gaps("tpu") == {T2: "skipped", T3: "reference_missing"}

    xla.reference_backend = xla.backends.get(name="tpu")
    xla.save(update_fields=["reference_backend"])
    call_command("recompute_parity", "pytorch-xla", stdout=io.StringIO())

    assert (open_gaps("tpu"), open_gaps("cpu")) == ({}, {T3: "missing"})
