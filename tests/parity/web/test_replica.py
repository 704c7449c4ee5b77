"""Page reads from the read replica (``parity.web.replica``): which views may read it, what a
write leaves behind, and that a page the replica fails is answered from the primary. The replica
alias here is a test mirror of the test database, which is no standby; where a test needs the
replica judged fit, it says so by replacing that one check. The real standby's tests are
tests/e2e/test_read_replica.py."""

import pytest
from django.db import DEFAULT_DB_ALIAS, connections
from django.test.utils import CaptureQueriesContext
from django.urls import resolve

import parity.read_replica
import parity.web.replica
from parity.read_replica import LSN, REPLICA
from parity.web.replica import WROTE_COOKIE, page_read
from tests.e2e.redis_server import free_port

MIDDLEWARE = "parity.web.replica.ReplicaReadsMiddleware"
EXEMPTIONS = "/p/pytorch-xla/exemptions/"
both_databases = pytest.mark.django_db(transaction=True, databases=[DEFAULT_DB_ALIAS, REPLICA])


@pytest.fixture
def replica_on(settings, monkeypatch):
    """The middleware installed, as PARITY_DB_REPLICA_URL does, and the replica not failed."""
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, MIDDLEWARE]
    monkeypatch.setattr(parity.read_replica, "_down_until", 0.0)


@pytest.fixture
def replica_fit(replica_on, monkeypatch):
    """The replica judged a fit standby (the mirror is none)."""
    monkeypatch.setattr(parity.web.replica, "replica_refusal", lambda *, wrote: None)


@pytest.mark.parametrize(
    "path, reads_replica",
    [
        ("/", True),
        ("/p/pytorch-xla/", True),
        (EXEMPTIONS, True),
        ("/p/pytorch-xla/gaps.csv", True),
        ("/api/v1/projects/pytorch-xla/parity/", True),
        ("/api/v1/projects/pytorch-xla/manifest/", True),
        # CI gates on the verdict right after its uploads: the primary.
        ("/api/v1/runs/1/verdict/", False),
        ("/api/v1/projects/pytorch-xla/triage/", False),
        # Ingest, the digest, logins and the admin are not page reads.
        ("/api/v1/uploads/1/", False),
        ("/p/pytorch-xla/digest/", False),
        ("/accounts/login/", False),
        ("/admin/", False),
    ],
)
def test_pages_and_the_read_api_may_read_the_replica(path, reads_replica):
    assert page_read(resolve(path).func) is reads_replica


def _parity_queries(captured) -> list[str]:
    return [q["sql"] for q in captured if '"parity_' in q["sql"]]


@both_databases
def test_a_page_read_routed_to_the_replica_reads_nothing_of_parity_on_the_primary(
    client, project, replica_fit
):
    with (
        CaptureQueriesContext(connections[REPLICA]) as replica,
        CaptureQueriesContext(connections[DEFAULT_DB_ALIAS]) as primary,
    ):
        assert client.get(EXEMPTIONS).status_code == 200
    assert _parity_queries(replica)
    assert _parity_queries(primary) == []


@both_databases
def test_a_replica_that_is_no_standby_is_not_read(client, project, replica_on):
    with (
        CaptureQueriesContext(connections[REPLICA]) as replica,
        CaptureQueriesContext(connections[DEFAULT_DB_ALIAS]) as primary,
    ):
        assert client.get(EXEMPTIONS).status_code == 200
    assert [q["sql"] for q in replica] == [parity.read_replica._STATE_SQL % {"wrote": "NULL"}]
    assert _parity_queries(primary)


@pytest.fixture
def replica_refusing(replica_fit):
    """The replica's address changed to a port nothing listens on: its connections fail."""
    replica = connections[REPLICA]
    port = replica.settings_dict["PORT"]
    replica.close()
    replica.settings_dict["PORT"] = free_port()
    try:
        yield
    finally:
        replica.close()
        replica.settings_dict["PORT"] = port


@both_databases
def test_a_page_the_replica_fails_is_answered_from_the_primary(client, project, replica_refusing):
    assert parity.read_replica._down_until == 0.0
    response = client.get(EXEMPTIONS)
    assert response.status_code == 200
    assert "Exemptions" in response.content.decode()
    assert parity.read_replica._down_until > 0.0  # left alone a while: no attempt per page


@both_databases
def test_a_write_leaves_the_primary_position_for_the_writers_next_pages(client, replica_on):
    response = client.post("/accounts/login/", {"username": "nobody", "password": "x"})
    assert response.status_code == 200  # the form again: a POST all the same
    assert LSN.fullmatch(response.cookies[WROTE_COOKIE].value)
    assert response.cookies[WROTE_COOKIE]["httponly"]


@both_databases
def test_a_malformed_write_cookie_is_ignored(client, project, replica_on):
    client.cookies[WROTE_COOKIE] = "1/2'; DROP TABLE parity_gap; --"
    with CaptureQueriesContext(connections[REPLICA]) as replica:
        assert client.get(EXEMPTIONS).status_code == 200
    assert [q["sql"] for q in replica] == [parity.read_replica._STATE_SQL % {"wrote": "NULL"}]
