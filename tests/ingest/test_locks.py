"""What an ingest in progress and a parity recompute lock, and what they must never block: other
CI jobs' uploads to the same project, run completion, triage. Each lock is held open by another
connection while this one does the work, under a lock timeout that turns any wait into an error."""

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from django.db import connection, transaction

from ingest.pipeline import _lock as upload_claim
from parity.models import Reason, Upload, UploadStatus
from parity.models.projects import project_lock
from tests.conftest import FIXTURES_DIR
from tests.uploads import post_upload

PYTEST_SMALL = FIXTURES_DIR / "junit" / "pytest_small.xml"
pytestmark = pytest.mark.django_db(transaction=True)


@contextmanager
def held(lock: Callable[[], object]) -> Iterator[None]:
    """Run ``lock`` in a transaction of another thread (its own connection) and keep it open."""
    holding, release, failed = threading.Event(), threading.Event(), []

    def hold() -> None:
        try:
            with transaction.atomic():
                lock()
                holding.set()
                release.wait(60)
        except Exception as exc:  # reported to the test below
            failed.append(exc)
            holding.set()
        finally:
            connection.close()

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert holding.wait(30) and not failed, failed
        yield
    finally:
        release.set()
        thread.join()


@pytest.fixture
def ingesting(api) -> int:
    """An upload a worker is ingesting right now: taken up, its claim held."""
    upload_id = post_upload(api, PYTEST_SMALL).json()["id"]  # ingested at once (eager)
    Upload.objects.filter(pk=upload_id).update(status=UploadStatus.PROCESSING)
    with connection.cursor() as cursor:
        cursor.execute("SET lock_timeout = '3s'")  # a blocked statement fails instead of waiting
    return upload_id


def test_an_ingest_in_progress_blocks_no_other_request_of_its_project(api, ingesting):
    reason = Reason.objects.filter(kind="skip").first()
    with held(lambda: upload_claim(ingesting)):
        shard = post_upload(api, ("shard2.xml", PYTEST_SMALL.read_bytes()), backend="tpu")
        other_run = post_upload(api, PYTEST_SMALL, backend="gpu", commit="b" * 40).json()["run"]
        completed = api.post(f"/api/v1/runs/{other_run}/complete/")
        triage = api.post(
            "/api/v1/projects/pytorch-xla/triage/",
            {"kind": "intended", "reason": reason.pk, "note": "not on this backend by design"},
            format="json",
        )

    assert (shard.status_code, completed.status_code, triage.status_code) == (202, 200, 201)
    assert Upload.objects.get(pk=shard.json()["id"]).status == UploadStatus.DONE


def test_a_recompute_in_progress_blocks_no_upload_of_its_project(api, project, ingesting):
    with held(lambda: project_lock(project_id=project.pk)):
        shard = post_upload(api, PYTEST_SMALL, backend="neuron", complete="true")

    assert shard.status_code == 202
    assert Upload.objects.get(pk=shard.json()["id"]).status == UploadStatus.DONE
