"""Ingest on many hosts: raw uploads in an S3-compatible bucket (moto's server, started here), and
two Celery workers that share only Postgres, Redis and the bucket with gunicorn and each other
(each runs in a directory of its own, with its own MEDIA_ROOT and TMPDIR). One project's shards
sent at once are each ingested once, by both workers; the files are in the bucket and nowhere on
a disk; retention deletes them from the bucket; a bucket lost mid-upload is a 503 the client
sends again, or a retry of the worker, never a 500, a lost upload or one stuck processing."""

import datetime
import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from parity.models import RawFileLeft, Result, Run, Upload, UploadFile
from tests.e2e.client import ApiClient, Reply
from tests.e2e.conftest import STALE_SECONDS, stack_started
from tests.e2e.expect import duplicated_tests, stored_counts, upload_settled
from tests.e2e.generate import Written, junit_write
from tests.e2e.stack import LiveStack, wait_for
from tests.object_storage import OwnedBucket
from tests.parity.clients.conftest import CLIENT_SECONDS, clean_environment

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

COMMIT = "5e" * 20
SHARDS = 12
CASES_PER_SHARD = 400
# Celery's line for each task a worker ran to the end.
INGESTED = re.compile(r"Task ingest\.tasks\.upload_ingest\[[0-9a-f-]+\] succeeded")
REFUSED = '"POST /api/v1/uploads/ HTTP/1.1" 503 '


@pytest.fixture(scope="module")
def bucket() -> Iterator[OwnedBucket]:
    owned = OwnedBucket()
    owned.start()
    try:
        yield owned
    finally:
        owned.stop()


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory, bucket) -> Iterator[LiveStack]:
    env = {"PARITY_UPLOAD_STALE_SECONDS": str(STALE_SECONDS), **bucket.env()}
    yield from stack_started(tmp_path_factory, env, worker_count=2, hosts_apart=True)


@pytest.fixture
def s3(bucket, live) -> Iterator[OwnedBucket]:
    """The bucket, empty (the table flush after a test deletes rows, not their objects), and
    answering again after the test whatever the test did to it."""
    bucket.empty()
    yield bucket
    if bucket.server is None:
        bucket.start()


def host_files(live: LiveStack) -> list[Path]:
    """Every file a process of the stack left in its own directory, logs aside."""
    return [
        path
        for process in ["web", *(w.name for w in live.workers)]
        for path in live.host_directory(process).rglob("*")
        if path.is_file()
    ]


def post_at_once(http_api: ApiClient, reports: list[Written], **fields: str) -> list[Reply]:
    barrier = threading.Barrier(len(reports))

    def post(report: Written) -> Reply:
        barrier.wait(timeout=60)
        return http_api.post_upload(report.path, commit=COMMIT, **fields)

    with ThreadPoolExecutor(max_workers=len(reports)) as pool:
        return list(pool.map(post, reports))


def shard(directory: Path, name: str, cases: int = CASES_PER_SHARD) -> Written:
    return junit_write(directory / f"{name}.xml", cases=cases, prefix=f"{name}_")


def test_two_workers_apart_ingest_one_runs_shards_from_the_bucket(http_api, live, s3, tmp_path):
    assert len(live.running_workers()) == 2
    reports = [shard(tmp_path, f"shard{n}") for n in range(SHARDS)]
    live.mark_logs()

    replies = post_at_once(http_api, reports, run="shards", backend="cpu")

    assert [r.status for r in replies] == [202] * SHARDS, [str(r) for r in replies]
    (run_id,) = {r.body["run"] for r in replies}
    assert http_api.run_complete(run_id).status == 200
    for reply, report in zip(replies, reports, strict=True):
        body = upload_settled(http_api, reply.body["id"], seconds=180, live=live)
        assert body["status"] == "done", body
        assert stored_counts(upload_id=body["id"]) == report.expected_counts()
    assert Result.objects.filter(run_id=run_id).count() == SHARDS * CASES_PER_SHARD
    assert duplicated_tests(run_id=run_id) == 0
    assert Run.objects.get(pk=run_id).completed_at is not None
    # Both workers took part, and each upload was ingested once.
    ingested = [len(INGESTED.findall(live.log_since_mark(w))) for w in live.workers]
    assert sum(ingested) == SHARDS and all(ingested), ingested
    # The raw files are in the bucket, byte for byte, and on no host's disk.
    stored = UploadFile.objects.filter(upload__run_id=run_id)
    assert {f.raw.name for f in stored} == s3.keys()
    by_name = {r.path.name: r.path.read_bytes() for r in reports}
    assert all(s3.read(f.raw.name) == by_name[f.name] for f in stored)
    assert host_files(live) == []


def test_retention_deletes_expired_runs_files_from_the_bucket(http_api, live, s3, tmp_path):
    today = datetime.datetime.now(datetime.UTC)
    runs = {}
    for age in (400, 300, 200):  # days: the oldest is neither current nor previous
        started = (today - datetime.timedelta(days=age)).isoformat()
        reports = [shard(tmp_path, f"d{age}s{n}", cases=50) for n in range(2)]
        replies = post_at_once(
            http_api, reports, run=f"day-{age}", backend="tpu", timestamp=started
        )
        assert [r.status for r in replies] == [202, 202], [str(r) for r in replies]
        for reply in replies:
            body = upload_settled(http_api, reply.body["id"], seconds=120, live=live)
            assert body["status"] == "done", body
        runs[age] = replies[0].body["run"]
        assert http_api.run_complete(runs[age]).status == 200
    keys = {
        age: {f.raw.name for f in UploadFile.objects.filter(upload__run_id=run_id)}
        for age, run_id in runs.items()
    }
    assert s3.keys() == keys[400] | keys[300] | keys[200]
    live.settle()  # the recomputes name the current and previous runs

    live.send_task("parity.tasks.results_expire")

    wait_for(
        lambda: Run.objects.get(pk=runs[400]).results_expired_at is not None,
        seconds=60,
        what="retention to expire the oldest run",
    )
    assert s3.keys() == keys[300] | keys[200]
    assert not Result.objects.filter(run_id=runs[400]).exists()
    assert Upload.objects.filter(run_id=runs[400]).count() == 2  # the history stays


def test_files_retention_could_not_delete_from_a_lost_bucket_go_once_it_is_back(
    http_api, live, s3, tmp_path
):
    """Retention expires a run while the bucket is out of reach: the run's file rows go, the
    objects the bucket refused to delete are recorded, and the beat's sweep deletes them once
    the bucket answers again."""
    today = datetime.datetime.now(datetime.UTC)
    runs = {}
    for age in (400, 300, 200):  # days: the oldest is neither current nor previous
        started = (today - datetime.timedelta(days=age)).isoformat()
        reply = http_api.post_upload(shard(tmp_path, f"left{age}", cases=20).path,
                                     commit=COMMIT, run=f"left-{age}", backend="tpu",
                                     timestamp=started)  # fmt: skip
        assert reply.status == 202, str(reply)
        assert upload_settled(http_api, reply.body["id"], seconds=120, live=live)["status"] == (
            "done"
        )
        runs[age] = reply.body["run"]
        assert http_api.run_complete(runs[age]).status == 200
    (expired_key,) = {f.raw.name for f in UploadFile.objects.filter(upload__run_id=runs[400])}
    live.settle()
    s3.stop()

    live.send_task("parity.tasks.results_expire")

    wait_for(
        lambda: RawFileLeft.objects.filter(name=expired_key).exists(),
        seconds=60,
        what="retention to record the file the bucket refused to delete",
    )
    assert Run.objects.get(pk=runs[400]).results_expired_at is not None
    s3.start()
    stored = s3.keys()
    assert expired_key in stored  # its row is gone, the object is not

    live.send_task("parity.tasks.raw_files_left_delete")

    wait_for(lambda: not RawFileLeft.objects.exists(), seconds=60, what="the sweep to delete it")
    stored = s3.keys()
    assert expired_key not in stored and len(stored) == 2  # the kept runs' files stay


def test_a_bucket_lost_mid_upload_is_a_503_and_the_upload_sent_again_is_kept(
    http_api, live, s3, tmp_path
):
    report = shard(tmp_path, "lost", cases=100)
    s3.stop()

    refused = http_api.post_upload(report.path, commit=COMMIT, run="lost", backend="gpu")

    assert refused.status == 503, str(refused)
    assert 3 <= int(refused.headers["Retry-After"]) <= 10
    assert "object store" in refused.body["detail"]
    assert not Upload.objects.exists() and not Run.objects.exists()
    s3.start()
    again = http_api.post_upload(report.path, commit=COMMIT, run="lost", backend="gpu")
    assert again.status == 202, str(again)
    body = upload_settled(http_api, again.body["id"], seconds=120, live=live)
    assert body["status"] == "done" and body["counts"] == report.expected_counts()
    assert " 500 " not in live.log_since_mark(live.web)


def test_the_served_client_sends_again_what_a_lost_bucket_refused(http_api, live, s3, tmp_path):
    """CI's own client (``/ci/parity_ci.py``) waits the 503's ``Retry-After`` and sends the
    upload again; once the bucket is back, it is kept, once."""
    report = shard(tmp_path, "served", cases=100)
    client = tmp_path / "parity_ci.py"
    with urllib.request.urlopen(f"{live.base_url}/ci/parity_ci.py", timeout=30) as served:
        client.write_bytes(served.read())
    s3.stop()

    upload = subprocess.Popen(
        [sys.executable, str(client), "upload", "--backend", "gpu", str(report.path)]
        + ["--commit", COMMIT, "--branch", "main", "--run", "served"],
        env=clean_environment(
            PARITY_URL=live.base_url, PARITY_PROJECT="pytorch-xla", PARITY_TOKEN=http_api.token
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_for(lambda: REFUSED in live.log_since_mark(live.web), seconds=60, what="a 503")
        s3.start()
        output, _ = upload.communicate(timeout=CLIENT_SECONDS)
    finally:
        upload.kill()

    assert upload.returncode == 0, output
    (stored,) = Upload.objects.all()
    body = upload_settled(http_api, stored.pk, seconds=120, live=live)
    assert body["status"] == "done" and body["counts"] == report.expected_counts()
    assert len(s3.keys()) == 1


def test_workers_that_lose_the_bucket_retry_until_it_is_back(http_api, live, s3, tmp_path):
    reports = [shard(tmp_path, f"retry{n}", cases=100) for n in range(4)]
    for worker in live.running_workers():  # the uploads wait in the queue, stored
        worker.stop()
    replies = post_at_once(http_api, reports, run="retried", backend="neuron")
    assert [r.status for r in replies] == [202] * len(reports), [str(r) for r in replies]
    ids = [r.body["id"] for r in replies]
    s3.stop()

    for _ in range(2):
        live.start_worker()
    # Every upload was taken up and could not be read; none failed or was written, and no
    # attempt counts against the uploads (recovery would fail them past the maximum).
    wait_for(
        lambda: not Upload.objects.filter(pk__in=ids, started_at__isnull=True).exists(),
        seconds=60,
        what="the workers to take up every upload",
    )
    time.sleep(2)  # into the retries' backoff
    states = Upload.objects.filter(pk__in=ids).values_list("status", "attempts")
    assert set(states) <= {("queued", 0), ("processing", 0), ("processing", 1)}, list(states)
    assert not Result.objects.exists()
    s3.start()

    for upload_id, report in zip(ids, reports, strict=True):
        body = upload_settled(http_api, upload_id, seconds=180, live=live)
        assert body["status"] == "done", body
        assert body["counts"] == report.expected_counts()
    assert "StorageUnavailable" in "".join(live.log_since_mark(w) for w in live.workers)
