"""``/readyz`` over the live stack says what the web needs and what is missing (docs/health.md):
ready with the database, the broker and a worker up; 503 naming the broker when Redis stops and
the worker when it stops; ready again once each is back. The broker is a Redis this module owns
(``owned_redis``); heartbeats are short so an absent worker shows within seconds."""

import time
from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.client import ApiClient, Reply
from tests.e2e.conftest import STALE_SECONDS, stack_on_owned_redis
from tests.e2e.expect import upload_settled
from tests.e2e.redis_server import OwnedRedis
from tests.e2e.stack import LiveStack
from tests.junit_builder import Case, junit_xml

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

HEARTBEAT_MAX_AGE_SECONDS = 3
ANSWER_SECONDS = 30
METRICS_TOKEN = "e2e-metrics"
PROBES = 40


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory, owned_redis: OwnedRedis) -> Iterator[LiveStack]:
    directory = tmp_path_factory.mktemp("e2e-health-stack")
    (directory / "metrics").mkdir()
    yield from stack_on_owned_redis(
        directory,
        owned_redis,
        {
            "PARITY_UPLOAD_STALE_SECONDS": str(STALE_SECONDS),
            "PARITY_WORKER_HEARTBEAT_SECONDS": "1",
            "PARITY_WORKER_HEARTBEAT_MAX_AGE_SECONDS": str(HEARTBEAT_MAX_AGE_SECONDS),
            "PARITY_METRICS_TOKEN": METRICS_TOKEN,
            # gunicorn runs two processes: each counts into its own files here.
            "PROMETHEUS_MULTIPROC_DIR": str(directory / "metrics"),
        },
    )


def readyz_until(http_api: ApiClient, status: int) -> Reply:
    """The first /readyz answer with ``status``; fail with the last answer past the deadline."""
    deadline = time.monotonic() + ANSWER_SECONDS
    while True:  # with the metrics token: the details are its bearer's (and staff's) only
        reply = http_api.request(
            "GET", "/readyz", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}
        )
        if reply.status == status or time.monotonic() > deadline:
            return reply
        time.sleep(0.3)


def test_healthz_answers_without_credentials(http_api, live):
    reply = http_api.request("GET", "/healthz", headers={"Authorization": ""})
    assert (reply.status, reply.body) == (200, {"status": "ok"})


def test_readyz_names_the_broker_then_the_worker_when_each_is_gone(http_api, live, owned_redis):
    ready = readyz_until(http_api, 200)
    assert ready.status == 200, str(ready)
    assert ready.body["failed"] == []
    assert ready.body["checks"]["worker"] == f"ok: {live.worker.nodename}"
    anyone = http_api.request("GET", "/readyz", headers={"Authorization": ""})
    assert anyone.body["checks"] == dict.fromkeys(ready.body["checks"], "ok"), str(anyone)

    owned_redis.stop()
    try:
        down = readyz_until(http_api, 503)
    finally:
        owned_redis.start()
    assert down.status == 503, str(down)
    assert down.body["failed"][0] == "broker", str(down)
    assert down.body["checks"]["database"] == "ok"
    assert readyz_until(http_api, 200).status == 200  # the worker's heartbeat resumes

    live.stop_worker()
    try:
        no_worker = readyz_until(http_api, 503)
    finally:
        live.start_worker()
    assert no_worker.status == 503, str(no_worker)
    assert no_worker.body["failed"] == ["worker"], str(no_worker)
    assert readyz_until(http_api, 200).status == 200, "a new worker makes it ready again"


def scraped(http_api: ApiClient, name: str, **labels: str) -> float:
    reply = http_api.request(
        "GET", "/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}
    )
    assert reply.status == 200, str(reply)
    return sum(
        sample.value
        for family in text_string_to_metric_families(reply.body)
        for sample in family.samples
        if sample.name == name and sample.labels == labels
    )


def healthz_answered(http_api: ApiClient) -> float:
    return scraped(
        http_api, "parity_http_requests_total", method="GET", view="healthz", status="200"
    )


def test_metrics_count_every_request_whichever_gunicorn_process_answered(http_api, live):
    before = healthz_answered(http_api)
    for _ in range(PROBES):
        assert http_api.request("GET", "/healthz").status == 200

    # Each scrape is answered by either process; each must count the requests of both.
    assert [healthz_answered(http_api) - before for _ in range(6)] == [PROBES] * 6
    assert http_api.request("GET", "/metrics").status == 401


def test_metrics_time_the_ingest_the_worker_ran(http_api, live):
    reply = http_api.post_upload(("report.xml", junit_xml(Case("TestOps", "test_add", "passed"))))
    assert reply.status == 202, str(reply)
    assert upload_settled(http_api, reply.body["id"], seconds=60, live=live)["status"] == "done"

    ingests = {"task": "ingest.tasks.upload_ingest", "state": "SUCCESS"}
    assert scraped(http_api, "parity_task_seconds_count", **ingests) == 1
    assert scraped(http_api, "parity_uploads", status="queued") == 0
