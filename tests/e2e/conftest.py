"""End-to-end tests: the live stack (gunicorn + a prefork Celery worker over Redis) against
pytest-django's test database, driven over HTTP.

The stack lives for the whole ``tests/e2e`` package. Tests are transactional
(``django_db(transaction=True)``): the rows a test creates (project, token) are committed at once,
so the stack's processes see them, and pytest-django empties the tables after each test. Before
that, the worker must fall idle (or it is replaced), so no task of one test reaches the next.
The logs the stack wrote during a failing test are added to its report.

With ``PARITY_TEST_PGBOUNCER=1`` every stack reaches the database through a PgBouncer in
transaction mode it starts (``tests/e2e/pgbouncer.py``). With ``PARITY_TEST_S3=1`` every stack
keeps its raw uploads in a bucket of an S3-compatible server it starts
(``tests/object_storage.py``), its processes each on a disk of their own.

Redis must be reachable (``PARITY_TEST_REDIS_URL``): without it the tests skip with the reason,
except under CI (``CI`` set, as ``.ci/run`` does), where they fail.
"""

import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import redis
from django.db import connection

from parity.services.projects import upload_token_create
from tests.e2e.client import ApiClient
from tests.e2e.pgbouncer import pgbouncer_for_test_database
from tests.e2e.redis_server import OwnedRedis
from tests.e2e.stack import LiveStack
from tests.object_storage import OwnedBucket

REDIS_URL = os.environ.get("PARITY_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
# The recovery task re-queues uploads untouched this long; short, so tests need not wait.
STALE_SECONDS = 5


def _redis_error() -> str | None:
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping()
    except redis.RedisError as exc:
        return f"no Redis broker at {REDIS_URL} ({exc})"
    return None


def _database_url() -> str:
    """The test database (pytest-django renamed it by now) as a URL for the subprocesses."""
    db = connection.settings_dict
    user = quote(db["USER"] or "", safe="")
    password = f":{quote(db['PASSWORD'], safe='')}" if db["PASSWORD"] else ""
    host = quote(db["HOST"] or "127.0.0.1", safe="")
    port = f":{db['PORT']}" if db["PORT"] else ""
    return f"postgres://{user}{password}@{host}{port}/{db['NAME']}"


def stack_started(
    tmp_path_factory, extra_env: dict[str, str], database_url: str | None = None, **options
) -> Iterator[LiveStack]:
    """A stack on a queue of its own, its processes given ``extra_env``; closed afterwards. A
    module needing other settings overrides ``stack`` with it (``live`` then serves that).
    ``database_url``: how its processes reach the test database (through a pooler), if not
    directly; ``options`` go to LiveStack (``worker_count``, ``hosts_apart``)."""
    problem = _redis_error()
    if problem and os.environ.get("CI"):
        pytest.fail(f"{problem}: end-to-end tests cannot run", pytrace=False)
    if problem:
        pytest.skip(f"{problem}; set PARITY_TEST_REDIS_URL or start redis-server")
    directory = tmp_path_factory.mktemp("e2e-stack")
    yield from _served(directory, REDIS_URL, extra_env, database_url=database_url, **options)


def stack_trusting(tmp_path_factory, issuer) -> Iterator[LiveStack]:
    """``stack_started`` for a server that trusts ``issuer``'s OIDC tokens
    (``tests.oidc_issuer.FakeIssuer``)."""
    yield from stack_started(
        tmp_path_factory,
        {"PARITY_UPLOAD_STALE_SECONDS": str(STALE_SECONDS), "PARITY_OIDC_ISSUERS": issuer.url},
    )


def stack_on_owned_redis(
    directory: Path, owned_redis: OwnedRedis, extra_env: dict[str, str], **options
) -> Iterator[LiveStack]:
    """A stack whose broker is a Redis the module owns and stops at will (``owned_redis``),
    started again for the teardown when a test left it down; ``options`` go to LiveStack."""

    def restart() -> None:  # before the stack's close, which empties its queue there
        if not owned_redis.answers():
            owned_redis.start()

    yield from _served(directory, owned_redis.url(0), extra_env, before_close=restart, **options)


def _served(
    directory: Path,
    redis_url: str,
    extra_env: dict[str, str],
    before_close: Callable[[], None] = lambda: None,
    database_url: str | None = None,
    **options,
) -> Iterator[LiveStack]:
    bouncer = bucket = None
    if database_url is None and os.environ.get("PARITY_TEST_PGBOUNCER"):
        # The whole live suite through a PgBouncer in transaction mode (docs/operations.md).
        bouncer = pgbouncer_for_test_database()
        bouncer.start()
        database_url, extra_env = bouncer.url, {**extra_env, "PARITY_DB_POOLED": "true"}
    if "PARITY_S3_BUCKET" not in extra_env and os.environ.get("PARITY_TEST_S3"):
        # The whole live suite with raw uploads in object storage (docs/operations.md).
        bucket = OwnedBucket()
        bucket.start()
        extra_env = {**extra_env, **bucket.env()}
        options.setdefault("hosts_apart", True)
    live = LiveStack(
        directory=directory,
        database_url=database_url or _database_url(),
        redis_url=redis_url,
        queue=f"parity-e2e-{uuid.uuid4().hex[:8]}",
        extra_env=extra_env,
        **options,
    )
    try:
        live.start()
        yield live
    finally:
        before_close()
        live.close()
        if bouncer is not None:
            bouncer.stop()
        if bucket is not None:
            bucket.stop()


@pytest.fixture(scope="package")
def stack(django_db_setup, tmp_path_factory) -> Iterator[LiveStack]:
    yield from stack_started(tmp_path_factory, {"PARITY_UPLOAD_STALE_SECONDS": str(STALE_SECONDS)})


@pytest.fixture(scope="module")
def owned_redis(tmp_path_factory) -> Iterator[OwnedRedis]:
    """A Redis the module owns, to stop and restart (the shared one is never touched)."""
    if shutil.which("redis-server") is None:
        message = "these tests start their own redis-server (apt install redis-server)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    server = OwnedRedis(directory=tmp_path_factory.mktemp("owned-redis"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def live(stack, project) -> Iterator[LiveStack]:
    """The stack, for one transactional test with the ``project`` fixture's project."""
    stack.mark_logs()
    if not stack.worker.alive():  # an earlier test killed it
        stack.start_worker()
    yield stack
    # No task of this test may run on into the table flush after it, nor into the next test.
    stack.settle()


@pytest.fixture
def http_api(live, project) -> ApiClient:
    """An upload client over HTTP with a fresh token of the ``pytorch-xla`` project."""
    return ApiClient(base_url=live.base_url, token=upload_token_create(project=project))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    live = item.funcargs.get("live") if hasattr(item, "funcargs") else None
    if report.failed and isinstance(live, LiveStack):
        for title, text in live.logs_since_mark():
            report.sections.append((title, text))
    return report
