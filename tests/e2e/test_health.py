"""``/readyz`` over the live stack says what the web needs and what is missing (docs/health.md):
ready with the database, the broker and a worker up; 503 naming the broker when Redis stops and
the worker when it stops; ready again once each is back. The broker is a Redis this module owns
(``owned_redis``); heartbeats are short so an absent worker shows within seconds."""

import time
import uuid
from collections.abc import Iterator

import pytest

from tests.e2e.client import ApiClient, Reply
from tests.e2e.conftest import STALE_SECONDS, _database_url
from tests.e2e.redis_server import OwnedRedis
from tests.e2e.stack import LiveStack

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

HEARTBEAT_MAX_AGE_SECONDS = 3
ANSWER_SECONDS = 30


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory, owned_redis: OwnedRedis) -> Iterator[LiveStack]:
    live = LiveStack(
        directory=tmp_path_factory.mktemp("e2e-health-stack"),
        database_url=_database_url(),
        redis_url=owned_redis.url(0),
        queue=f"parity-e2e-{uuid.uuid4().hex[:8]}",
        extra_env={
            "PARITY_UPLOAD_STALE_SECONDS": str(STALE_SECONDS),
            "PARITY_WORKER_HEARTBEAT_SECONDS": "1",
            "PARITY_WORKER_HEARTBEAT_MAX_AGE_SECONDS": str(HEARTBEAT_MAX_AGE_SECONDS),
        },
    )
    try:
        live.start()
        yield live
    finally:
        if not owned_redis.answers():
            owned_redis.start()
        live.close()


def readyz_until(http_api: ApiClient, status: int) -> Reply:
    """The first /readyz answer with ``status``; fail with the last answer past the deadline."""
    deadline = time.monotonic() + ANSWER_SECONDS
    while True:
        reply = http_api.request("GET", "/readyz")
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
