"""Retention: old raw results and files go; runs, roll-ups, and current and previous runs stay."""

import datetime
from pathlib import Path

from django.utils import timezone

from ingest.reingest import project_reingest
from parity.models import BackendState, GapEvent, Result, Run, Snapshot, Upload, UploadFile
from parity.services.retention import results_expire

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
