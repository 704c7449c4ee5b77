"""Retention: old raw results and files go, by day partitions where they can; runs, roll-ups,
and current and previous runs stay."""

import datetime
from pathlib import Path

from django.utils import timezone

from ingest.reingest import project_reingest
from parity.models import (
    BackendState,
    FileSeconds,
    Gap,
    GapEvent,
    Outcome,
    Result,
    Run,
    RunFile,
    Snapshot,
    Upload,
    UploadFile,
)
from parity.pure.run_days import day_of
from parity.services.retention import results_expire
from parity.storage.partitions import partitions_list

T = "test/a.py::TestA::"
DAYS = ["2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04"]


def a_year_later() -> datetime.datetime:
    return timezone.now() + datetime.timedelta(days=365)


def test_old_results_and_files_go_while_current_previous_and_rollups_stay(
    upload_run, django_capture_on_commit_callbacks
):
    upload_run("cpu", {f"{T}test_1": "passed", f"{T}test_2": "passed"}, day=DAYS[0])
    runs = [
        upload_run("tpu", {f"{T}test_1": "passed", f"{T}test_2": ("skipped", "no")}, day=day)
        for day in DAYS
    ]
    unfinished = upload_run("tpu", {f"{T}test_1": "passed"}, day="2026-01-05", complete=False)
    state = BackendState.objects.get(backend__name="tpu")
    assert (state.previous_run_id, state.current_run_id) == (runs[2], runs[3])
    old = [runs[0], runs[1], unfinished]
    old_files = [Path(f.raw.path) for f in UploadFile.objects.filter(upload__run_id__in=old)]
    snapshots, events = Snapshot.objects.count(), GapEvent.objects.count()

    with django_capture_on_commit_callbacks(execute=True):
        expired = results_expire(now=a_year_later(), batch_size=1)

    cpu_current = BackendState.objects.get(backend__name="cpu").current_run_id
    kept = {cpu_current, runs[2], runs[3]}
    assert sorted(expired.runs) == sorted(old)
    assert (expired.results, expired.files) == (5, 3)
    assert set(Result.objects.values_list("run_id", flat=True)) == kept
    assert not any(path.exists() for path in old_files)
    assert not UploadFile.objects.filter(upload__run_id__in=old).exists()
    assert UploadFile.objects.filter(upload__run_id__in=kept).count() == 3
    # Runs, uploads and roll-ups keep the history pages show.
    assert Run.objects.count() == 6 and Upload.objects.count() == 6
    assert (Snapshot.objects.count(), GapEvent.objects.count()) == (snapshots, events)
    assert set(
        Run.objects.filter(results_expired_at__isnull=False).values_list("pk", flat=True)
    ) == set(old)


def test_expiry_runs_once_and_reingest_skips_expired_runs(upload_run):
    for day in DAYS[:3]:
        upload_run("cpu", {f"{T}test_1": "passed"}, day=day)
    first = results_expire(now=a_year_later())

    assert len(first.runs) == 1
    assert results_expire(now=a_year_later()).runs == []
    counts = Upload.objects.get(run_id=first.runs[0]).counts
    summary = project_reingest(project=Run.objects.get(pk=first.runs[0]).project)
    assert summary.runs == 2
    assert Upload.objects.get(run_id=first.runs[0]).counts == counts


def test_nothing_within_the_retention_period_expires(upload_run, settings):
    settings.PARITY_RESULTS_KEEP_DAYS = 180
    for day in DAYS:
        upload_run("cpu", {f"{T}test_1": "passed"}, day=day)

    assert results_expire(now=datetime.datetime(2026, 3, 1, tzinfo=datetime.UTC)).runs == []


def test_a_past_day_without_a_run_to_keep_goes_by_dropping_its_partitions(
    upload_run, run_day_clock
):
    today = day_of(timezone.now().date())
    old_day, recent_day = today - 200, today - 100
    run_day_clock(old_day)
    old = [upload_run("cpu", {f"{T}test_1": "passed"}, day=day) for day in DAYS[:2]]
    run_day_clock(recent_day)
    kept = [upload_run("cpu", {f"{T}test_1": "passed"}, day=day) for day in DAYS[2:]]
    RunFile.objects.create(run_id=old[0], file="test/a.py", state="ran")
    assert {old_day, recent_day} <= set(partitions_list())

    expired = results_expire()

    # Day 0, the partition of runs from before run ids named days, goes too: it is empty here.
    assert set(expired.days) == {0, old_day} and sorted(expired.runs) == sorted(old)
    assert expired.results == 0  # nothing deleted row by row
    assert old_day not in partitions_list() and recent_day in partitions_list()
    assert old_day not in partitions_list(model=FileSeconds)
    assert not Result.objects.filter(run_id__in=old).exists()
    assert Result.objects.filter(run_id__in=kept).count() == 2
    assert not RunFile.objects.filter(run_id__in=old).exists()
    assert Run.objects.filter(pk__in=old, results_expired_at__isnull=False).count() == 2
    # The day's runs and uploads stay, and so do the roll-ups of the runs kept.
    assert Upload.objects.filter(run_id__in=old).count() == 2
    assert results_expire().days == []


def test_a_day_holding_a_run_to_keep_loses_only_the_other_runs_rows(upload_run, run_day_clock):
    today = day_of(timezone.now().date())
    run_day_clock(today - 200)
    runs = [upload_run("cpu", {f"{T}test_1": "passed"}, day=day) for day in DAYS]

    expired = results_expire()

    assert today - 200 not in expired.days and sorted(expired.runs) == sorted(runs[:2])
    assert expired.results == 2
    assert today - 200 in partitions_list()
    assert set(Result.objects.values_list("run_id", flat=True)) == set(runs[2:])


def test_passes_go_sooner_than_the_rest_with_passes_keep_days(upload_run, run_day_clock, settings):
    settings.PARITY_PASSES_KEEP_DAYS = 30
    today = day_of(timezone.now().date())
    run_day_clock(today - 60)
    old = upload_run("tpu", {f"{T}test_1": "passed", f"{T}test_2": ("skipped", "no")}, day=DAYS[0])
    run_day_clock(today - 1)
    kept = [
        upload_run("tpu", {f"{T}test_1": "passed", f"{T}test_2": ("skipped", "no")}, day=day)
        for day in DAYS[1:3]
    ]

    # Two months after CI ran them: past the passes' 30 days, within the rest's 180.
    expired = results_expire(now=datetime.datetime(2026, 3, 1, tzinfo=datetime.UTC))

    assert (expired.runs, expired.passes) == ([], 1)
    assert list(Result.objects.filter(run_id=old).values_list("outcome", flat=True)) == [
        Outcome.SKIPPED
    ]
    assert Result.objects.filter(run_id__in=kept).count() == 4
    run = Run.objects.get(pk=old)
    assert run.passes_expired_at is not None and run.results_expired_at is None
    assert results_expire(now=datetime.datetime(2026, 3, 1, tzinfo=datetime.UTC)).passes == 0


def test_closed_gaps_past_retention_go_with_their_events(upload_run):
    for day in DAYS[:3]:
        upload_run("cpu", {f"{T}test_1": "passed", f"{T}test_2": "passed"}, day=day)
    states = [("skipped", "no"), ("failed", "boom"), "passed"]
    for day, state in zip(DAYS[:3], states, strict=True):
        upload_run("tpu", {f"{T}test_1": state, f"{T}test_2": ("failed", "x")}, day=day)
    closed = Gap.objects.get(test__key=f"{T}test_1")
    assert not closed.is_open and GapEvent.objects.filter(gap=closed).exists()

    expired = results_expire(now=a_year_later())

    assert expired.gaps == 1
    assert not Gap.objects.filter(pk=closed.pk).exists()
    assert not GapEvent.objects.filter(gap_id=closed.pk).exists()
    assert Gap.objects.filter(test__key=f"{T}test_2", is_open=True).exists()
