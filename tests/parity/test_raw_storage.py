"""Raw uploads in an S3-compatible bucket (moto's server, started here): stored there by the
upload API, read from there by the ingest, deleted from there with their runs, and a bucket out
of reach answered 503 with nothing kept, or retried by the ingest, never a 500 or a lost upload.
The live stack's two workers on separate disks are tests/e2e/test_object_storage.py."""

import datetime
from collections.abc import Iterator

import pytest
from django.core.files.storage import default_storage
from django.utils import timezone

from ingest import pipeline
from ingest.recovery import uploads_recover
from ingest.tasks import upload_ingest
from parity.models import RawFileLeft, Result, Run, Upload, UploadFile, UploadStatus
from parity.raw_storage import StorageUnavailable
from parity.services.retention import raw_files_left_delete
from parity.settings.base import raw_storage
from tests.conftest import FIXTURES_DIR
from tests.object_storage import OwnedBucket
from tests.uploads import post_upload

PYTEST_SMALL = FIXTURES_DIR / "junit" / "pytest_small.xml"
SMALL_COUNTS = 6  # results in pytest_small.xml


@pytest.fixture
def bucket(settings, monkeypatch) -> Iterator[OwnedBucket]:
    """A bucket on a server of this test's, and parity's default storage in it."""
    owned = OwnedBucket()
    owned.start()
    for name, value in owned.env().items():
        monkeypatch.setenv(name, value)
    settings.STORAGES = {**settings.STORAGES, "default": raw_storage(owned.bucket)}
    try:
        yield owned
    finally:
        owned.stop()


def media_files(settings) -> list:
    return [p for p in settings.MEDIA_ROOT.rglob("*") if p.is_file()]


def test_an_upload_is_kept_in_the_bucket_and_ingested_from_it(bucket, ingest, settings):
    reply = ingest(PYTEST_SMALL, backend="cpu")

    assert reply.status_code == 202, reply.json()
    upload = Upload.objects.get(pk=reply.json()["id"])
    assert upload.status == UploadStatus.DONE, upload.error
    assert Result.objects.filter(run_id=upload.run_id).count() == SMALL_COUNTS
    stored = upload.files.get()
    assert bucket.keys() == {stored.raw.name}
    assert bucket.read(stored.raw.name) == PYTEST_SMALL.read_bytes()
    assert media_files(settings) == []  # nothing on this host's disk


def test_one_file_in_two_runs_is_two_objects_and_a_deleted_run_takes_only_its_own(
    bucket, ingest, django_capture_on_commit_callbacks
):
    kept = ingest(PYTEST_SMALL, backend="cpu").json()["run"]
    gone = ingest(PYTEST_SMALL, backend="tpu").json()["run"]
    kept_key = UploadFile.objects.get(upload__run_id=kept).raw.name
    gone_key = UploadFile.objects.get(upload__run_id=gone).raw.name
    assert kept_key != gone_key and bucket.keys() == {kept_key, gone_key}

    with django_capture_on_commit_callbacks(execute=True):
        Run.objects.get(pk=gone).delete()

    assert bucket.keys() == {kept_key}
    assert default_storage.exists(kept_key) and not default_storage.exists(gone_key)


def test_a_bucket_out_of_reach_answers_503_and_keeps_nothing(bucket, api, ingest):
    bucket.stop()

    reply = post_upload(api, PYTEST_SMALL, backend="cpu")

    assert reply.status_code == 503, reply.content
    assert 3 <= int(reply["Retry-After"]) <= 10
    assert "object store" in reply.json()["detail"]
    assert not Upload.objects.exists() and not Run.objects.exists()

    bucket.start()  # the CI client sends it again after Retry-After
    again = ingest(PYTEST_SMALL, backend="cpu")
    assert again.status_code == 202, again.json()
    assert Upload.objects.get().status == UploadStatus.DONE
    assert len(bucket.keys()) == 1


def test_files_stored_before_a_failure_leave_the_bucket(bucket, api, monkeypatch):
    """A request that fails after some of its files were stored (here Postgres refusing the
    second file's row) leaves neither rows nor objects behind."""
    saved = UploadFile.save
    calls = []

    def second_refused(self, *args, **kwargs):
        calls.append(self.name)
        if len(calls) == 2:
            raise StorageUnavailable("refused for the test")
        return saved(self, *args, **kwargs)

    monkeypatch.setattr(UploadFile, "save", second_refused)
    other = ("other.xml", PYTEST_SMALL.read_bytes().replace(b"test_", b"test_other_"))

    reply = post_upload(api, PYTEST_SMALL, other, backend="cpu")

    assert reply.status_code == 503, reply.content
    assert len(calls) == 2
    assert bucket.keys() == set() and not Upload.objects.exists()


def test_the_ingest_retries_a_lost_bucket_and_writes_nothing_meanwhile(
    bucket, api, django_capture_on_commit_callbacks
):
    # Stored while the bucket answers; the queued task is not run (no on-commit callbacks).
    upload_id = post_upload(api, PYTEST_SMALL, backend="cpu").json()["id"]
    bucket.stop()

    with pytest.raises(StorageUnavailable):  # the task's autoretry_for retries it
        pipeline.upload_ingest(upload_id=upload_id)

    upload = Upload.objects.get(pk=upload_id)
    assert upload.status == UploadStatus.PROCESSING and not Result.objects.exists()
    bucket.start()
    with django_capture_on_commit_callbacks(execute=True):
        pipeline.upload_ingest(upload_id=upload_id)
    assert Upload.objects.get(pk=upload_id).status == UploadStatus.DONE
    assert Result.objects.count() == SMALL_COUNTS


def test_a_file_gone_from_the_bucket_fails_its_upload_saying_so(bucket, api):
    upload_id = post_upload(api, PYTEST_SMALL, backend="cpu").json()["id"]
    key = UploadFile.objects.get(upload_id=upload_id).raw.name
    bucket.client().delete_object(Bucket=bucket.bucket, Key=key)

    pipeline.upload_ingest(upload_id=upload_id)

    upload = Upload.objects.get(pk=upload_id)
    assert upload.status == UploadStatus.FAILED
    assert upload.error == f"pytest_small.xml: its stored raw file {key} is missing"


def test_the_admin_streams_a_raw_file_from_the_bucket(bucket, ingest, admin_client):
    upload_id = ingest(PYTEST_SMALL, backend="cpu").json()["id"]
    stored = UploadFile.objects.get(upload_id=upload_id)

    page = admin_client.get(f"/admin/parity/upload/{upload_id}/change/")
    link = f"/admin/parity/upload/{upload_id}/files/{stored.pk}/raw/"
    assert link in page.content.decode()
    reply = admin_client.get(link)

    assert reply.status_code == 200
    assert b"".join(reply.streaming_content) == PYTEST_SMALL.read_bytes()
    assert 'filename="pytest_small.xml"' in reply["Content-Disposition"]
    bucket.stop()
    assert admin_client.get(link).status_code == 503


def test_an_ingest_outlasted_by_the_outage_is_left_to_recovery_not_failed(
    bucket, api, settings, django_capture_on_commit_callbacks
):
    upload_id = post_upload(api, PYTEST_SMALL, backend="cpu").json()["id"]
    bucket.stop()

    upload_ingest.apply(args=[upload_id])  # eager: its retries run at once, and are all spent

    upload = Upload.objects.get(pk=upload_id)
    assert (upload.status, upload.attempts, upload.error) == (UploadStatus.PROCESSING, 0, "")
    bucket.start()
    later = timezone.now() + datetime.timedelta(seconds=settings.PARITY_UPLOAD_STALE_SECONDS + 1)
    with django_capture_on_commit_callbacks(execute=True):
        recovered = uploads_recover(enqueue=lambda pk: upload_ingest.apply(args=[pk]), now=later)
    assert recovered.requeued == [upload_id]
    assert Upload.objects.get(pk=upload_id).status == UploadStatus.DONE


def test_a_delete_the_bucket_refused_is_recorded_and_swept_once_it_is_back(
    bucket, ingest, django_capture_on_commit_callbacks
):
    run = ingest(PYTEST_SMALL, backend="cpu").json()["run"]
    key = UploadFile.objects.get(upload__run_id=run).raw.name
    bucket.stop()

    with django_capture_on_commit_callbacks(execute=True):
        Run.objects.get(pk=run).delete()

    assert list(RawFileLeft.objects.values_list("name", "attempts")) == [(key, 1)]
    assert raw_files_left_delete() == 0  # still out of reach: kept, counted
    assert RawFileLeft.objects.get().attempts == 2

    bucket.start()
    assert bucket.keys() == {key}  # the object outlived its row
    assert raw_files_left_delete() == 1
    assert bucket.keys() == set() and not RawFileLeft.objects.exists()


def test_a_name_an_upload_holds_again_is_forgotten_not_deleted(bucket, ingest):
    run = ingest(PYTEST_SMALL, backend="cpu").json()["run"]
    key = UploadFile.objects.get(upload__run_id=run).raw.name
    RawFileLeft.objects.create(name=key)  # left by an older upload of the same content

    assert raw_files_left_delete() == 0

    assert bucket.keys() == {key} and not RawFileLeft.objects.exists()
