"""Faults are inputs: a worker SIGKILLed mid-ingest, its database connection terminated
mid-ingest, a queued upload whose message the broker lost. Each ends ``done`` with exact counts
and no result stored twice. And the web's connections dropped: no request answers 500.

Recovery is the beat task ``ingest.tasks.uploads_recover``: it re-queues uploads queued or
processing for longer than ``PARITY_UPLOAD_STALE_SECONDS`` (5 s in the stack's environment). The
tests send it through the broker, as beat would, while they wait.
"""

import pytest
from django.db import connection

from parity.models import Result
from tests.e2e.conftest import STALE_SECONDS
from tests.e2e.expect import (
    duplicated_tests,
    stored_counts,
    upload_settled,
    upload_status_reached,
)
from tests.e2e.generate import junit_write
from tests.e2e.stack import WEB_APPLICATION_NAME, WORKER_APPLICATION_NAME

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RECOVER_TASK = "ingest.tasks.uploads_recover"
# Large enough that ingest takes seconds on this 2-core machine, so a fault lands mid-ingest.
FAULT_CASES = 150_000


def settled_by_recovery(http_api, live, upload_id: int, *, seconds: float) -> dict:
    """Wait for the upload to end, sending the recovery task through the broker as beat would."""
    return upload_settled(
        http_api,
        upload_id,
        seconds=seconds,
        live=live,
        poke=lambda: live.send_task(RECOVER_TASK),
        poke_every=STALE_SECONDS / 2,
    )


def test_worker_sigkilled_mid_ingest_is_recovered(http_api, live, tmp_path):
    report = junit_write(tmp_path / "big.xml", cases=FAULT_CASES)
    reply = http_api.post_upload(report.path)
    assert reply.status == 202, str(reply)
    upload_id = reply.body["id"]
    upload_status_reached(http_api, upload_id, "processing", seconds=60)
    killed = live.worker.group_pids()

    live.worker.kill()  # SIGKILL to the main process and its pool children at once

    assert len(killed) >= 3, killed  # the main process and its two pool children
    assert live.worker.group_pids() == []
    assert http_api.upload(upload_id).body["status"] == "processing"
    live.start_worker()
    body = settled_by_recovery(http_api, live, upload_id, seconds=180)
    assert body["status"] == "done", body
    assert body["counts"] == report.expected_counts()
    assert stored_counts(upload_id=upload_id) == report.expected_counts()
    assert duplicated_tests(run_id=body["run"]) == 0


def _terminate_connections(application_name: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name = %s AND datname = current_database()",
            [application_name],
        )
        return cursor.fetchone()[0]


def test_database_connection_terminated_mid_ingest_is_retried(http_api, live, tmp_path):
    report = junit_write(tmp_path / "big.xml", cases=FAULT_CASES)
    reply = http_api.post_upload(report.path)
    assert reply.status == 202, str(reply)
    upload_id = reply.body["id"]
    upload_status_reached(http_api, upload_id, "processing", seconds=60)

    assert _terminate_connections(WORKER_APPLICATION_NAME) >= 1

    body = upload_settled(http_api, upload_id, seconds=180, live=live)
    assert body["status"] == "done", body
    assert body["counts"] == report.expected_counts()
    assert stored_counts(upload_id=upload_id) == report.expected_counts()
    assert duplicated_tests(run_id=body["run"]) == 0
    assert "retry: Retry in" in live.log_since_mark(live.worker), "the ingest task never retried"


def test_upload_whose_message_was_lost_is_requeued(http_api, live, tmp_path):
    report = junit_write(tmp_path / "junit.xml", cases=2_000)
    live.stop_worker()
    first = http_api.post_upload(report.path)
    assert first.status == 202, str(first)
    live.queue_purge()  # the broker lost the message: nothing will ever ingest this upload
    live.start_worker()

    again = http_api.post_upload(report.path)  # CI retries the same file

    assert again.status in (200, 202), str(again)
    assert again.body["id"] == first.body["id"]
    body = settled_by_recovery(http_api, live, first.body["id"], seconds=60)
    assert body["status"] == "done", body
    assert body["counts"] == report.expected_counts()
    assert Result.objects.filter(upload_id=first.body["id"]).count() == report.total


def test_dropped_web_connections_cost_no_request(http_api, live, tmp_path):
    # gunicorn's threads keep their connections open between requests (CONN_MAX_AGE); a database
    # restart or failover drops them all, and each thread's next request must not answer 500.
    reply = http_api.post_upload(junit_write(tmp_path / "small.xml", cases=10).path)
    assert reply.status == 202, str(reply)
    upload_id = reply.body["id"]
    assert {http_api.upload(upload_id).status for _ in range(16)} == {200}

    assert _terminate_connections(WEB_APPLICATION_NAME) >= 1

    assert [http_api.upload(upload_id).status for _ in range(16)] == [200] * 16
