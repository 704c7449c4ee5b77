"""Issue 37 item 4: the live stack behind PgBouncer in transaction mode (Debian's package, started
by the test in front of the test database; ``tests/e2e/pgbouncer.py``). gunicorn and the Celery
worker reach Postgres only through it, with ``PARITY_DB_POOLED=true``, and share a few server
connections, so any state a client left on one (a session lock, a cursor kept past its
transaction, a session ``SET``) would meet another client or be missing when it looked again:

- uploads ingested by the worker, and the recomputes of complete runs (temporary tables,
  ``SET LOCAL``, transaction-scoped advisory locks), leave the gaps they should;
- the gaps CSV, longer than one batch of its reads, lists every open gap in its order;
- the issue sync, sent through the broker as beat sends it, reads the trackers; a second sync
  sent while the first waits on the tracker does nothing, and the next one runs.

The test process itself talks to Postgres directly (fixtures, assertions).
"""

import csv
import io
import os
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from parity.models import Lease, TrackingIssue
from parity.services.projects import upload_token_create
from tests.e2e.client import ApiClient
from tests.e2e.conftest import REDIS_URL, stack_started
from tests.e2e.expect import upload_settled
from tests.e2e.pgbouncer import EXECUTABLE, pgbouncer_for_test_database
from tests.e2e.stack import LiveStack, wait_for
from tests.fake_tracker import FakeTracker, github_issue
from tests.parity.conftest import run_xml

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SYNC = "parity.tasks.issues_sync"
XLA = "https://github.com/pytorch/xla/issues"
F = "test/test_ops.py::TestOps::"
TESTS = [f"{F}test_{n:04d}" for n in range(2500)]
# More than one batch of the gaps CSV's reads (parity.dashboard.downloads.GAPS_BATCH).
FAILING_FIRST = TESTS[:2400]
FAILING_THEN = TESTS[:1400]
FAILED = ("failed", "AssertionError: tensors differ")


@pytest.fixture(scope="module")
def pgbouncer(django_db_setup):
    if EXECUTABLE is None:
        message = "these tests start Debian's pgbouncer (apt-get install pgbouncer)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    bouncer = pgbouncer_for_test_database()
    bouncer.start()
    try:
        yield bouncer
    finally:
        bouncer.stop()


@pytest.fixture(scope="module")
def github():
    with FakeTracker() as fake:
        fake.add_github("pytorch/xla", github_issue(101, "XLA has no complex64", state="closed"))
        fake.add_github("pytorch/xla", github_issue(102, "Lower aten::nonzero"))
        yield fake


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory, pgbouncer, github):
    yield from stack_started(
        tmp_path_factory,
        {
            "PARITY_DB_POOLED": "true",
            "PARITY_TRACKER_API_URLS": f"github.com={github.github_api}",
            "PARITY_TRACKER_TOKENS": f"github.com={github.token}",
            "PARITY_TRACKER_SYNC_SECONDS": "60",
            "PARITY_TRACKER_SYNC_TICK_SECONDS": "60",
            "CACHE_URL": REDIS_URL,
        },
        database_url=pgbouncer.url,
    )


def upload(api: ApiClient, live: LiveStack, backend: str, results: dict) -> None:
    reply = api.post_upload(
        ("results.xml", run_xml(results)),
        backend=backend,
        commit=uuid.uuid4().hex[:12] * 3,
        branch="main",
        complete="true",
    )
    assert reply.status == 202, str(reply)
    assert upload_settled(api, reply.body["id"], seconds=120, live=live)["status"] == "done"


def gaps_csv(live: LiveStack) -> list[list[str]]:
    url = f"{live.base_url}/p/pytorch-xla/gaps.csv?open=1&sort=-test"
    with urllib.request.urlopen(url, timeout=60) as response:
        return list(csv.reader(io.StringIO(response.read().decode())))[1:]


def open_gaps_listed(live: LiveStack, failing: list[str]) -> None:
    """Wait for the recompute: the CSV lists exactly ``failing``, newest test key first."""
    expected = [("tpu", test) for test in sorted(failing, reverse=True)]
    wait_for(
        lambda: [(row[0], row[1]) for row in gaps_csv(live)] == expected,
        seconds=60,
        what=f"the gaps CSV listing the {len(failing)} failing tests",
    )


def test_uploads_recomputes_and_the_gaps_csv_through_pgbouncer(live, project, pgbouncer):
    before = pgbouncer.stats()
    api = ApiClient(base_url=live.base_url, token=upload_token_create(project=project))
    upload(api, live, "cpu", dict.fromkeys(TESTS, "passed"))

    upload(api, live, "tpu", {t: FAILED if t in FAILING_FIRST else "passed" for t in TESTS})
    open_gaps_listed(live, FAILING_FIRST)

    # The next run fixes a thousand: its recompute closes their gaps.
    upload(api, live, "tpu", {t: FAILED if t in FAILING_THEN else "passed" for t in TESTS})
    open_gaps_listed(live, FAILING_THEN)

    # Downloads at once take turns on the pool's few server connections between their reads.
    expected = gaps_csv(live)
    with ThreadPoolExecutor(max_workers=6) as downloads:
        assert list(downloads.map(lambda _: gaps_csv(live), range(12))) == [expected] * 12

    parity = api.request("GET", "/api/v1/projects/pytorch-xla/parity/").body
    tpu = next(b for b in parity["backends"] if b["backend"] == "tpu")
    assert tpu["untracked"] == len(FAILING_THEN)
    # The web reached Postgres through PgBouncer (the worker closes its connection after each
    # task: the sync below finds it connected mid-task).
    assert "parity-e2e-web" in pgbouncer.client_names()
    assert pgbouncer.stats()["total_xact_count"] > before["total_xact_count"]


def test_the_issue_sync_through_pgbouncer_runs_one_at_a_time(live, project, github, pgbouncer):
    api = ApiClient(base_url=live.base_url, token=upload_token_create(project=project))
    upload(api, live, "cpu", {f"{F}test_1": "passed", f"{F}test_2": "passed"})
    tpu = {
        f"{F}test_1": ("skipped", f"XLA has no complex64, see {XLA}/101"),
        f"{F}test_2": ("skipped", f"lowering, see {XLA}/102"),
    }
    upload(api, live, "tpu", tpu)
    wait_for(lambda: TrackingIssue.objects.count() == 2, seconds=60, what="two cited issues")

    # The first sync waits on the tracker, holding the lease, when the second arrives.
    github.answering.clear()
    try:
        arrived = github.arrived
        live.send_task(SYNC)
        wait_for(lambda: github.arrived > arrived, seconds=30, what="the first sync's request")
        holder = Lease.objects.get(name="issue-sync").holder
        assert "parity-e2e-worker" in pgbouncer.client_names()
        live.mark_logs()
        live.send_task(SYNC)
        wait_for(
            lambda: "another sync is running" in live.log_since_mark(live.worker),
            seconds=30,
            what="the second sync to skip",
        )
        assert holder in live.log_since_mark(live.worker)
    finally:
        github.answering.set()
    wait_for(
        lambda: set(TrackingIssue.objects.values_list("state", flat=True)) == {"closed", "open"},
        seconds=30,
        what="the first sync to store both issues",
    )
    assert github.arrived == arrived + 2  # each issue read once: the second sync asked nothing

    # The lease was given back: the next sync runs (nothing is due a minute after a read).
    live.mark_logs()
    live.send_task(SYNC)
    wait_for(
        lambda: "issue sync: 2 cited, 0 due" in live.log_since_mark(live.worker),
        seconds=30,
        what="the next sync to run",
    )
    assert "another sync is running" not in live.log_since_mark(live.worker)
