"""Redis lost and back: the broker and the rate-limit cache of the stack are a Redis this module
owns (``OwnedRedis``), restarted and stopped while CI uploads. The worker runs as
docker/compose.yml runs it (heartbeats, gossip and mingle on), and must outlive every restart;
every upload ends done with exact counts; no request answers 5xx.
"""

import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.e2e.client import ApiClient, Reply
from tests.e2e.conftest import STALE_SECONDS, _database_url
from tests.e2e.expect import duplicated_tests, stored_counts, upload_settled
from tests.e2e.generate import Written, junit_write
from tests.e2e.redis_server import OwnedRedis
from tests.e2e.stack import LiveStack

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RECOVER_TASK = "ingest.tasks.uploads_recover"
LOST_SECONDS = 20
SHARDS = 40
CASES_PER_SHARD = 3_000
RESTARTS = 10


@pytest.fixture(scope="module")
def owned_redis(tmp_path_factory) -> Iterator[OwnedRedis]:
    server = OwnedRedis(directory=tmp_path_factory.mktemp("owned-redis"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory, owned_redis) -> Iterator[LiveStack]:
    live = LiveStack(
        directory=tmp_path_factory.mktemp("e2e-redis-stack"),
        database_url=_database_url(),
        redis_url=owned_redis.url(0),
        queue=f"parity-e2e-{uuid.uuid4().hex[:8]}",
        extra_env={
            "CACHE_URL": owned_redis.url(1),
            "PARITY_UPLOAD_STALE_SECONDS": str(STALE_SECONDS),
            "PARITY_UPLOAD_LOST_SECONDS": str(LOST_SECONDS),
        },
        worker_options=(),  # as docker/compose.yml starts it
    )
    try:
        live.start()
        yield live
    finally:
        if not owned_redis.answers():
            owned_redis.start()
        live.close()


def _restart_loop(server: OwnedRedis, stop: threading.Event, *, times: int) -> None:
    for number in range(times):
        if stop.wait(1.5 + number % 3 * 0.5):
            return
        server.restart(down_seconds=0.3 + number % 4 * 0.3)


def test_redis_restarts_during_shard_uploads_lose_nothing(
    http_api, live, owned_redis, tmp_path
):
    shards = [
        junit_write(tmp_path / f"shard{n}.xml", cases=CASES_PER_SHARD, prefix=f"s{n}_")
        for n in range(SHARDS)
    ]
    worker_pid = live.worker.popen.pid
    stop = threading.Event()
    restarts = threading.Thread(
        target=_restart_loop, args=(owned_redis, stop), kwargs={"times": RESTARTS}
    )
    started = time.monotonic()
    restarts.start()
    try:
        replies = _post_spread(http_api, shards, seconds=12)
        restarts.join(timeout=120)
    finally:
        stop.set()
        restarts.join()

    assert owned_redis.restarts == RESTARTS
    assert [r.status for r in replies if r.status >= 500] == [], [str(r) for r in replies]
    assert {r.status for r in replies} == {202}, [str(r) for r in replies if r.status != 202]
    for reply, shard in zip(replies, shards, strict=True):
        body = _settled(http_api, live, reply.body["id"])
        assert body["status"] == "done", body
        assert body["counts"] == shard.expected_counts()
        assert stored_counts(upload_id=reply.body["id"]) == shard.expected_counts()
    assert duplicated_tests(run_id=replies[0].body["run"]) == 0
    live.assert_worker_alive()
    assert live.worker.popen.pid == worker_pid
    print(f"{SHARDS} shards, {RESTARTS} Redis restarts: {time.monotonic() - started:.1f} s")


def _post_spread(http_api: ApiClient, shards: list[Written], *, seconds: float) -> list[Reply]:
    """Four CI jobs at a time, the posts spread over ``seconds`` (so over the restarts)."""
    gap = seconds / len(shards)

    def post(item: tuple[int, Written]) -> Reply:
        number, shard = item
        time.sleep(number * gap)
        return http_api.post_upload(shard.path, commit="c" * 40, run="redis-restarts")

    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(post, enumerate(shards)))


def _settled(http_api: ApiClient, live: LiveStack, upload_id: int) -> dict:
    """Beat sends the recovery task every minute; here every few seconds."""
    return upload_settled(
        http_api,
        upload_id,
        seconds=150,
        live=live,
        poke=lambda: live.send_task(RECOVER_TASK),
        poke_every=STALE_SECONDS,
    )
