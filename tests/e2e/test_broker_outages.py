"""Redis away while CI uploads, with the recovery tick as beat sends it (docs/resilience.md): an
upload accepted while the broker was down goes out at the first tick after it is back, never
two messages for one upload. The lost-message sweep stays at its default (30 minutes), so only
the unsent mark can bring these uploads in on time."""

import base64
import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis
from kombu.exceptions import OperationalError

from tests.e2e.client import ApiClient, Reply
from tests.e2e.conftest import STALE_SECONDS, stack_on_owned_redis
from tests.e2e.expect import stored_counts
from tests.e2e.generate import Written, junit_write
from tests.e2e.redis_server import OwnedRedis
from tests.e2e.stack import LiveStack

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RECOVER_TASK = "ingest.tasks.uploads_recover"
OUTAGES = 5  # Redis stopped for longer than a publish's retries, while shards are posted
BEAT_SECONDS = 60  # PARITY_RECOVERY_INTERVAL_SECONDS' default


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory, owned_redis) -> Iterator[LiveStack]:
    yield from stack_on_owned_redis(
        tmp_path_factory.mktemp("e2e-outage-stack"),
        owned_redis,
        {"PARITY_UPLOAD_STALE_SECONDS": str(STALE_SECONDS)},
        worker_options=(),  # as docker/compose.yml starts it
    )


def test_redis_down_during_shard_uploads_every_upload_is_done_within_two_minutes_of_its_return(
    http_api, live, owned_redis, tmp_path
):
    shards = [
        junit_write(tmp_path / f"o{n}.xml", cases=300, prefix=f"o{n}_") for n in range(OUTAGES * 4)
    ]
    beat = _Beat(live, owned_redis)
    returns: dict[int, float] = {}  # upload id -> when Redis was last back after its post
    with beat:
        for outage in range(OUTAGES):
            batch = shards[outage * 4 : outage * 4 + 4]
            owned_redis.stop()
            with ThreadPoolExecutor(max_workers=2) as pool:  # each waits out the publish retries
                down = list(pool.map(lambda s: _post_outage(http_api, s), batch[:2]))
            owned_redis.start()
            back = time.monotonic()
            replies = [*down, *(_post_outage(http_api, s) for s in batch[2:])]
            assert [r.status for r in replies] == [202] * 4, [str(r) for r in replies]
            returns.update({reply.body["id"]: back for reply in replies})
        done = _done_times(http_api, live, owned_redis, returns)

    waits = {pk: done[pk] - back for pk, back in returns.items()}
    assert max(waits.values()) <= 120, waits
    for reply_id, shard in zip(returns, shards, strict=True):
        assert stored_counts(upload_id=reply_id) == shard.expected_counts()
    live.assert_worker_alive()
    print(
        f"{OUTAGES} outages, {len(returns)} uploads: done at most {max(waits.values()):.0f} s "
        f"after Redis was back, {beat.ticks} recovery ticks"
    )


def _post_outage(http_api: ApiClient, shard: Written) -> Reply:
    return http_api.post_upload(shard.path, commit="f" * 40, run="redis-outages")


class _Beat:
    """celery beat's recovery entry: the tick every PARITY_RECOVERY_INTERVAL_SECONDS (60 s) while
    Redis answers; a tick due while it is down is lost, as beat's is."""

    def __init__(self, live: LiveStack, server: OwnedRedis) -> None:
        self.live, self.server, self.ticks = live, server, 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        while not self.stop.wait(0 if self.ticks == 0 else BEAT_SECONDS):
            try:
                self.live.send_task(RECOVER_TASK)
                self.ticks += 1
            except (redis.RedisError, OperationalError, OSError):
                continue

    def __enter__(self) -> "_Beat":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()


def _done_times(
    http_api: ApiClient, live: LiveStack, server: OwnedRedis, returns: dict[int, float]
) -> dict[int, float]:
    """When each upload was first seen done; meanwhile, never two messages of one upload in
    the broker (waiting in the queue, or delivered and not yet acknowledged)."""
    done: dict[int, float] = {}
    deadline = max(returns.values()) + 150
    while len(done) < len(returns) and time.monotonic() < deadline:
        per_upload = _messages_per_upload(live, server)
        assert max(per_upload.values(), default=0) <= 1, per_upload
        for upload_id in set(returns) - set(done):
            body = http_api.upload(upload_id).body
            assert body["status"] != "failed", body
            if body["status"] == "done":
                done[upload_id] = time.monotonic()
        time.sleep(1)
    assert set(done) == set(returns), {pk: http_api.upload(pk).body for pk in returns}
    return done


def _messages_per_upload(live: LiveStack, server: OwnedRedis) -> Counter:
    """Ingest messages of this stack's queue per upload id, read in one Redis transaction."""
    pipe = redis.Redis.from_url(server.url(0)).pipeline(transaction=True)
    waiting, unacked = pipe.lrange(live.queue, 0, -1).hvals("unacked").execute()
    messages = [json.loads(raw) for raw in waiting]
    for raw in unacked:
        message, _exchange, routing_key = json.loads(raw)
        if routing_key == live.queue:
            messages.append(message)
    return Counter(
        json.loads(base64.b64decode(m["body"]))[0][0]
        for m in messages
        if m["headers"]["task"] == "ingest.tasks.upload_ingest"
    )
