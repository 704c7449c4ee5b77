"""The stack survives its own infrastructure and its neighbours (docs/resilience.md).

The broker and the rate-limit cache of this module's stack are a Redis the module owns
(``OwnedRedis``), restarted and stopped while CI uploads; the worker runs as docker/compose.yml
runs it (heartbeats, gossip and mingle on). Redis restarts and outages: the worker outlives
them, every upload ends done with exact counts, no request answers 5xx. Neighbours: bad tokens
from a shared address, one password sprayed over many usernames. And recovery never queues an
upload twice, and a SIGKILLed worker takes its pool children with it.
"""

import datetime
import http.cookiejar
import os
import re
import signal
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.error import HTTPError

import pytest
import redis
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone

from ingest import recovery
from parity.services.projects import upload_token_create
from tests.e2e.client import ApiClient, Reply
from tests.e2e.conftest import STALE_SECONDS, stack_on_owned_redis
from tests.e2e.expect import (
    duplicated_tests,
    stored_counts,
    upload_settled,
    upload_status_reached,
)
from tests.e2e.generate import Written, junit_write
from tests.e2e.redis_server import OwnedRedis
from tests.e2e.stack import WORKER_APPLICATION_NAME, LiveStack

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RECOVER_TASK = "ingest.tasks.uploads_recover"
LOST_SECONDS = 20
SHARDS = 40
CASES_PER_SHARD = 3_000
RESTARTS = 10
FAULT_CASES = 150_000  # ingest takes seconds on a 2-core machine: the kill lands mid-ingest
# Small limits, in windows of a day (a test never straddles one); the module's Redis forgets
# the counts after each test that makes them (``forget_limits``).
BAD_TOKENS_PER_DAY = 10
FAILED_LOGINS_PER_ADDRESS = 8


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory, owned_redis) -> Iterator[LiveStack]:
    yield from stack_on_owned_redis(
        tmp_path_factory.mktemp("e2e-redis-stack"),
        owned_redis,
        {
            "CACHE_URL": owned_redis.url(1),
            "PARITY_UPLOAD_STALE_SECONDS": str(STALE_SECONDS),
            # A message the worker had reserved when Redis went away waits in Redis's unacked
            # set for the visibility timeout (30 min); here the lost-message sweep sends it again
            # sooner. test_broker_outages.py keeps the sweep at its default.
            "PARITY_UPLOAD_LOST_SECONDS": str(LOST_SECONDS),
            "PARITY_THROTTLE_BAD_TOKEN": f"{BAD_TOKENS_PER_DAY}/day",
            "PARITY_THROTTLE_LOGIN_ADDRESS": f"{FAILED_LOGINS_PER_ADDRESS}/day",
        },
        worker_options=(),  # as docker/compose.yml starts it
    )


def _restart_loop(server: OwnedRedis, stop: threading.Event, *, times: int) -> None:
    for number in range(times):
        if stop.wait(1.5 + number % 3 * 0.5):
            return
        server.restart(down_seconds=0.3 + number % 4 * 0.3)


def test_redis_restarts_during_shard_uploads_lose_nothing(http_api, live, owned_redis, tmp_path):
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


def test_with_redis_down_uploads_answer_as_usual_and_are_ingested_once_it_is_back(
    http_api, live, owned_redis, tmp_path
):
    shard = junit_write(tmp_path / "down.xml", cases=500)
    owned_redis.stop()
    started = time.monotonic()
    try:
        reply = http_api.post_upload(shard.path, commit="d" * 40)
        answered = time.monotonic() - started
        status = http_api.upload(reply.body["id"]) if reply.status == 202 else None
    finally:
        owned_redis.start()

    # The limiter failed open (nothing to count in), the message could not be sent: the upload
    # is stored, and the next recovery tick sends it.
    assert reply.status == 202, str(reply)
    assert status.status == 200 and status.body["status"] == "queued", str(status)
    assert "rate limits not enforced: the cache is unreachable" in live.log_since_mark(live.web)
    body = _settled(http_api, live, reply.body["id"])
    assert body["status"] == "done", body
    assert body["counts"] == shard.expected_counts()
    live.assert_worker_alive()
    print(f"Redis down: upload answered {reply.status} in {answered:.1f} s, then done")


@pytest.fixture
def forget_limits(owned_redis) -> Iterator[None]:
    yield
    redis.Redis.from_url(owned_redis.url(1)).flushdb()


def test_a_valid_token_keeps_working_from_an_address_that_guesses(
    http_api, live, project, forget_limits, tmp_path
):
    assert http_api.post_upload(junit_write(tmp_path / "a.xml", cases=5).path).status == 202
    guesser = ApiClient(base_url=live.base_url, token="not-a-token")

    guesses = [guesser.request("GET", "/api/v1/uploads/1/").status for _ in range(14)]

    assert guesses == [401] * BAD_TOKENS_PER_DAY + [429] * 4
    print(f"bad tokens: {guesses.count(401)} x 401, {guesses.count(429)} x 429")
    # The CI token this address used before keeps uploading and reading.
    again = http_api.post_upload(junit_write(tmp_path / "b.xml", cases=5, prefix="b").path)
    assert again.status == 202, str(again)
    assert http_api.upload(again.body["id"]).status == 200
    # Guessing stays throttled: a wrong key answers 429, and so does a right one this address
    # never used, so a guess learns nothing.
    assert guesser.request("GET", "/api/v1/uploads/1/").status == 429
    fresh = ApiClient(base_url=live.base_url, token=upload_token_create(project=project))
    assert fresh.upload(again.body["id"]).status == 429


def test_failed_logins_from_one_address_are_capped_across_usernames(live, forget_limits):
    User.objects.create_user("maintainer", password="right-password-123")
    browser = _Browser(live.base_url)

    sprayed = [browser.login(f"user{n}", "Summer2026!") for n in range(FAILED_LOGINS_PER_ADDRESS)]
    refused = browser.login("user-next", "Summer2026!")
    right = browser.login("maintainer", "right-password-123")

    assert sprayed == [200] * FAILED_LOGINS_PER_ADDRESS  # the form again, with its error
    assert (refused, right) == (429, 429)


class _Browser:
    """The login form over HTTP, with its CSRF cookie and field, as a browser sends it."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))

    def login(self, username: str, password: str) -> int:
        with self.opener.open(f"{self.base_url}/accounts/login/", timeout=30) as page:
            token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page.read())
        form = {"csrfmiddlewaretoken": token.group(1).decode(), "username": username}
        body = urllib.parse.urlencode({**form, "password": password}).encode()
        request = urllib.request.Request(
            f"{self.base_url}/accounts/login/", data=body, headers={"Referer": self.base_url}
        )
        try:
            with self.opener.open(request, timeout=30) as answer:
                return answer.status
        except HTTPError as exc:
            return exc.code


def test_recovery_keeps_one_message_in_flight_per_pending_upload(
    http_api, live, owned_redis, settings, tmp_path
):
    settings.PARITY_UPLOAD_STALE_SECONDS = STALE_SECONDS
    settings.PARITY_UPLOAD_LOST_SECONDS = LOST_SECONDS
    shards = [junit_write(tmp_path / f"q{n}.xml", cases=200, prefix=f"q{n}") for n in range(6)]
    live.stop_worker()  # a backlog: every message waits in the queue
    replies = [http_api.post_upload(s.path, commit="e" * 40, run="backlog") for s in shards]
    assert {r.status for r in replies} == {202}, [str(r) for r in replies]
    queue = redis.Redis.from_url(owned_redis.url(0))

    for seconds in (STALE_SECONDS + 1, 2 * STALE_SECONDS + 2, 3 * STALE_SECONDS + 3):
        # beat's ticks, each a stale period after the last (all before the messages are lost)
        later = timezone.now() + datetime.timedelta(seconds=seconds)
        recovery.uploads_recover(enqueue=lambda pk: _send_ingest(live, pk), now=later)

    assert queue.llen(live.queue) == len(shards)
    print(f"recovery: 3 ticks, {queue.llen(live.queue)} messages for {len(shards)} pending")
    live.start_worker()
    for reply, shard in zip(replies, shards, strict=True):
        body = _settled(http_api, live, reply.body["id"])
        assert (body["status"], body["counts"]) == ("done", shard.expected_counts()), body


def _send_ingest(live: LiveStack, upload_id: int) -> None:
    live.celery.send_task("ingest.tasks.upload_ingest", args=[upload_id], queue=live.queue)


def test_pool_children_die_with_a_sigkilled_worker(http_api, live, tmp_path):
    report = junit_write(tmp_path / "big.xml", cases=FAULT_CASES)
    reply = http_api.post_upload(report.path, commit="f" * 40)
    assert reply.status == 202, str(reply)
    upload_status_reached(http_api, reply.body["id"], "processing", seconds=60)
    worker = live.worker
    children = [pid for pid in worker.group_pids() if pid != worker.popen.pid]
    assert len(children) == live.concurrency, children
    assert _worker_connections() >= 1  # the ingesting child's

    os.kill(worker.popen.pid, signal.SIGKILL)  # the main process only, as the OOM killer does
    killed = time.monotonic()

    # Seconds, where an orphan would run on until its ingest ends (and the idle one until it
    # noticed): the children, their connections and the upload's row lock go at once.
    while (_alive(children) or _worker_connections()) and time.monotonic() - killed < 2:
        time.sleep(0.02)
    orphans, connections = _alive(children), _worker_connections()
    print(f"SIGKILL of the main process: children gone in {time.monotonic() - killed:.2f} s")
    worker.stop()  # reaps the main process (and, without the fix, kills the orphans)
    assert (orphans, connections) == ([], 0), "pool children outlived their worker"
    live.start_worker()
    body = _settled(http_api, live, reply.body["id"])
    assert (body["status"], body["counts"]) == ("done", report.expected_counts()), body


def _alive(pids: list[int]) -> list[int]:
    alive = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.append(pid)
    return alive


def _worker_connections() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE application_name = %s AND datname = current_database()",
            [WORKER_APPLICATION_NAME],
        )
        return cursor.fetchone()[0]
