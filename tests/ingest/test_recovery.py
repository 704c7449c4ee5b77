"""Recovery of uploads nobody is ingesting: stale ones are queued again, a live worker's upload
is left alone, hopeless ones fail with the reason, and a resent upload is queued again."""

import datetime
import threading

import psycopg2
import pytest
from django.db import connection
from django.utils import timezone

from ingest import recovery
from ingest.pipeline import upload_ingest
from parity.models import Result, Upload, UploadStatus
from tests.conftest import FIXTURES_DIR
from tests.uploads import post_upload

PYTEST_SMALL = FIXTURES_DIR / "junit" / "pytest_small.xml"


@pytest.fixture
def stuck(api, settings) -> Upload:
    """An upload committed but never ingested: its task was lost (on_commit never ran)."""
    settings.PARITY_UPLOAD_STALE_SECONDS = 60
    settings.PARITY_UPLOAD_LOST_SECONDS = 60
    response = post_upload(api, PYTEST_SMALL)
    assert response.status_code == 202
    upload = Upload.objects.get(pk=response.json()["id"])
    assert upload.status == UploadStatus.QUEUED
    return upload


def later(minutes: int) -> datetime.datetime:
    return timezone.now() + datetime.timedelta(minutes=minutes)


def test_a_stale_upload_is_queued_again_once_per_stale_period(stuck):
    queued = []

    recovered = recovery.uploads_recover(enqueue=queued.append, now=later(2))

    assert recovered.requeued == [stuck.pk]
    stuck.refresh_from_db()
    assert stuck.requeued_at is not None
    # Just queued again: not stale until another period passes.
    assert recovery.uploads_recover(enqueue=queued.append, now=later(2)).requeued == []
    assert recovery.uploads_recover(enqueue=queued.append, now=later(4)).requeued == [stuck.pk]


def test_a_queued_upload_waits_its_turn_until_its_message_is_presumed_lost(stuck, settings):
    # A backlog: the upload's message is still in the queue, behind others. Queueing it again
    # every stale period would multiply the queue; it is queued again once, when lost.
    settings.PARITY_UPLOAD_LOST_SECONDS = 30 * 60

    assert recovery.uploads_recover(enqueue=lambda pk: None, now=later(2)).requeued == []
    assert recovery.uploads_recover(enqueue=lambda pk: None, now=later(29)).requeued == []
    assert recovery.uploads_recover(enqueue=lambda pk: None, now=later(31)).requeued == [stuck.pk]
    assert recovery.uploads_recover(enqueue=lambda pk: None, now=later(40)).requeued == []


def test_an_upload_its_worker_took_up_and_dropped_is_queued_again_when_stale(stuck, settings):
    settings.PARITY_UPLOAD_LOST_SECONDS = 30 * 60
    Upload.objects.filter(pk=stuck.pk).update(
        status=UploadStatus.PROCESSING, started_at=timezone.now(), attempts=1
    )

    assert recovery.uploads_recover(enqueue=lambda pk: None, now=later(2)).requeued == [stuck.pk]
    # Queued again: that message is in flight until a worker takes it up.
    assert recovery.uploads_recover(enqueue=lambda pk: None, now=later(4)).requeued == []


def test_an_upload_whose_message_never_reached_the_broker_goes_at_the_next_tick(
    stuck, settings, django_capture_on_commit_callbacks
):
    # Redis was down when the upload was accepted: no message waits anywhere, so waiting until
    # it is presumed lost would only delay it. The next tick sends it, once.
    settings.PARITY_UPLOAD_LOST_SECONDS = 30 * 60
    recovery.upload_unsent_mark(upload_id=stuck.pk)
    sent = []

    with django_capture_on_commit_callbacks(execute=True):
        first = recovery.uploads_recover(enqueue=sent.append, now=timezone.now())
    second = recovery.uploads_recover(enqueue=sent.append, now=later(2))

    assert (first.requeued, second.requeued, sent) == ([stuck.pk], [], [stuck.pk])
    stuck.refresh_from_db()
    assert stuck.unsent is False
    # Sent again and still unsent (the broker went away again): the tick after sends it.
    recovery.upload_unsent_mark(upload_id=stuck.pk)
    assert recovery.uploads_recover(enqueue=sent.append, now=later(3)).requeued == [stuck.pk]


def test_a_fresh_upload_is_left_alone(stuck):
    assert recovery.uploads_recover(enqueue=lambda pk: None, now=timezone.now()).requeued == []


def test_a_requeued_upload_is_ingested_exactly(stuck, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        recovery.uploads_recover(enqueue=lambda pk: upload_ingest(upload_id=pk), now=later(2))

    stuck.refresh_from_db()
    assert (stuck.status, stuck.counts["total"], stuck.attempts) == (UploadStatus.DONE, 6, 1)
    assert Result.objects.filter(upload=stuck).count() == 6


def test_an_upload_taken_up_too_often_fails_with_the_reason(stuck, settings):
    settings.PARITY_UPLOAD_MAX_ATTEMPTS = 3
    Upload.objects.filter(pk=stuck.pk).update(status=UploadStatus.PROCESSING, attempts=3)

    recovered = recovery.uploads_recover(enqueue=lambda pk: None, now=later(2))

    stuck.refresh_from_db()
    assert recovered.failed == [stuck.pk]
    assert stuck.status == UploadStatus.FAILED
    assert stuck.error.startswith("Ingest did not finish after 3 attempts")
    assert not Result.objects.filter(upload=stuck).exists()


def test_resending_a_stuck_upload_queues_it_again(api, stuck, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        again = post_upload(api, PYTEST_SMALL)

    assert again.status_code == 200
    stuck.refresh_from_db()
    assert (stuck.status, stuck.counts["total"]) == (UploadStatus.DONE, 6)


def test_resending_an_unsent_upload_leaves_recovery_no_second_message_to_send(
    api, stuck, settings, django_capture_on_commit_callbacks
):
    settings.PARITY_UPLOAD_LOST_SECONDS = 30 * 60
    recovery.upload_unsent_mark(upload_id=stuck.pk)

    with django_capture_on_commit_callbacks() as sends:  # the resend's message, not sent here
        assert post_upload(api, PYTEST_SMALL).status_code == 200

    assert len(sends) == 1
    assert recovery.uploads_recover(enqueue=lambda pk: None, now=timezone.now()).requeued == []


@pytest.mark.django_db(transaction=True)
def test_an_upload_a_live_worker_holds_is_neither_requeued_nor_taken_twice(api, settings):
    settings.PARITY_UPLOAD_STALE_SECONDS = 60
    upload_id = post_upload(api, PYTEST_SMALL).json()["id"]  # ingested at once (autocommit)
    Result.objects.filter(upload_id=upload_id).delete()  # back to "taken up, nothing written"
    Upload.objects.filter(pk=upload_id).update(status=UploadStatus.PROCESSING, counts={})
    holding, release = threading.Event(), threading.Event()

    def live_worker():  # another connection holds the claim, as a slow worker's ingest does
        db = connection.settings_dict
        other = psycopg2.connect(
            dbname=db["NAME"], user=db["USER"], host=db["HOST"] or None, port=db["PORT"] or None
        )
        with other, other.cursor() as cursor:
            cursor.execute(
                "SELECT 1 FROM parity_upload WHERE id = %s FOR NO KEY UPDATE", [upload_id]
            )
            holding.set()
            release.wait(30)
        other.close()

    thread = threading.Thread(target=live_worker)
    thread.start()
    try:
        assert holding.wait(10)
        assert recovery.uploads_recover(enqueue=lambda pk: None, now=later(2)).requeued == []
        upload_ingest(upload_id=upload_id)  # a duplicate delivery returns at once
        assert not Result.objects.filter(upload_id=upload_id).exists()
    finally:
        release.set()
        thread.join()
    assert recovery.uploads_recover(enqueue=lambda pk: None, now=later(2)).requeued == [upload_id]
