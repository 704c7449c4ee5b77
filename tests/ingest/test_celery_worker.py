"""A real Celery worker, over the local Redis broker, ingests an upload end to end."""

import os
import subprocess
import sys
import time
import uuid
from urllib.parse import quote

import pytest
import redis
from django.db import connection

from parity.celery import app as celery_app
from parity.models import Result, Upload, UploadStatus
from tests.conftest import FIXTURES_DIR
from tests.uploads import post_upload

REDIS_URL = os.environ.get("PARITY_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def _redis_reachable() -> bool:
    try:
        return bool(redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


def _test_database_url() -> str:
    db = connection.settings_dict
    host = quote(db["HOST"] or "127.0.0.1", safe="")
    port = f":{db['PORT']}" if db["PORT"] else ""
    return f"postgres://{db['USER']}@{host}{port}/{db['NAME']}"


@pytest.fixture
def broker_queue():
    queue = f"parity-test-{uuid.uuid4().hex[:8]}"
    saved = {
        k: celery_app.conf[k] for k in ("broker_url", "task_always_eager", "task_default_queue")
    }
    _forget_routing()
    celery_app.conf.update(broker_url=REDIS_URL, task_always_eager=False, task_default_queue=queue)
    yield queue
    celery_app.conf.update(saved)
    _forget_routing()


def _forget_routing() -> None:
    # Celery caches its queues, router and broker pool on first use (earlier eager tests), so a
    # changed broker or default queue would otherwise be ignored.
    celery_app.__dict__.pop("amqp", None)
    celery_app._pool = None


@pytest.fixture
def worker(broker_queue, settings):
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "parity.settings.test",
        "DATABASE_URL": _test_database_url(),
        "CELERY_BROKER_URL": REDIS_URL,
        "PARITY_MEDIA_ROOT": str(settings.MEDIA_ROOT),
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "parity",
            "worker",
            "--pool=solo",
            "--without-heartbeat",
            "--without-gossip",
            "--without-mingle",
            "-Q",
            broker_queue,
            "--loglevel=WARNING",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    yield process
    process.terminate()
    process.wait(timeout=30)


@pytest.mark.celery_worker
@pytest.mark.skipif(not _redis_reachable(), reason=f"no Redis broker at {REDIS_URL}")
@pytest.mark.django_db(transaction=True)
def test_worker_over_redis_ingests_an_upload(api, worker):
    response = post_upload(api, FIXTURES_DIR / "junit" / "pytest_small.xml")
    assert response.status_code == 202
    upload_id = response.json()["id"]

    deadline = time.monotonic() + 60
    upload = Upload.objects.get(pk=upload_id)
    while upload.status in (UploadStatus.QUEUED, UploadStatus.PROCESSING):
        assert worker.poll() is None, worker.stdout.read().decode()
        assert time.monotonic() < deadline, "the worker did not finish the upload within 60 s"
        time.sleep(0.2)
        upload.refresh_from_db()

    assert upload.status == UploadStatus.DONE, upload.error
    assert upload.counts["total"] == 6
    assert Result.objects.filter(upload=upload).count() == 6
