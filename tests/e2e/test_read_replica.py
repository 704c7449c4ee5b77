"""Issue 37 item 5: pages read a streaming replica (``tests/e2e/standby.py``: ``pg_basebackup`` of
the test database's Postgres, started by the test), everything else the primary.

The proof that a page read the replica: the replica's replay is paused, a maintainer saves an
exemption (on the primary), and another reader's page does not list it: only the paused replica
still lacks it. The maintainer's own redirect lists it (read your own writes), and so does every
page once the replica is behind by more than the lag limit, or gone.

Skips, saying why, when the test database's Postgres refuses replication connections
(``.ci/run`` allows them from 127.0.0.1).
"""

import http.cookiejar
import re
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from html import unescape

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from parity.models import Membership, Role
from tests.e2e.conftest import stack_started
from tests.e2e.stack import LiveStack, wait_for
from tests.e2e.standby import OwnedStandby, StandbyError, replication_refusal, tools_missing

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

MAX_LAG_SECONDS = 10
REPLICA_READER = "parity-e2e-replica-reader"  # the application name of the web's replica reads
EXEMPTIONS = "/p/pytorch-xla/exemptions/"
MANIFEST = "/api/v1/projects/pytorch-xla/manifest/?backend=tpu"
WROTE_COOKIE = "parity_wrote"


@pytest.fixture(scope="module")
def standby(django_db_setup) -> Iterator[OwnedStandby]:
    missing = tools_missing()
    if missing:
        pytest.skip(missing)
    db = connection.settings_dict
    replica = OwnedStandby(
        primary=(db["HOST"] or "127.0.0.1", int(db["PORT"] or 5432)), user=db["USER"] or "postgres"
    )
    try:
        replica.start()
    except StandbyError as exc:
        replica.remove()
        reason = replication_refusal(exc)
        if reason is None:
            raise
        pytest.skip(reason)
    try:
        yield replica
    finally:
        replica.remove()


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory, standby) -> Iterator[LiveStack]:
    yield from stack_started(
        tmp_path_factory,
        {
            "PARITY_DB_REPLICA_URL": standby.url(connection.settings_dict["NAME"], REPLICA_READER),
            "PARITY_DB_REPLICA_MAX_LAG_SECONDS": str(MAX_LAG_SECONDS),
            "PARITY_DB_REPLICA_RETRY_SECONDS": "5",
        },
    )


class Browser:
    """Pages over HTTP with a cookie jar, as a browser keeps one; logs in through the form."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))

    def get(self, path: str) -> str:
        with self.opener.open(self.base_url + path, timeout=60) as page:
            assert page.status == 200, page.status
            return unescape(re.sub(r"\s+", " ", page.read().decode()))

    def post(self, path: str, form: dict) -> str:
        """POST ``form`` with the CSRF token of the page at ``path``; the page redirected to."""
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', self.get(path)).group(1)
        body = urllib.parse.urlencode({"csrfmiddlewaretoken": token, **form}, doseq=True)
        request = urllib.request.Request(
            self.base_url + path, data=body.encode(), headers={"Referer": self.base_url}
        )
        with self.opener.open(request, timeout=60) as page:
            return unescape(re.sub(r"\s+", " ", page.read().decode()))

    def cookie(self, name: str) -> str | None:
        return next((c.value for c in self.cookies if c.name == name), None)


def maintainer(live: LiveStack, project) -> Browser:
    user = get_user_model().objects.create_user("maintainer", password="right-password-123")
    Membership.objects.create(user=user, project=project, role=Role.MAINTAINER)
    browser = Browser(live.base_url)
    browser.post("/accounts/login/", {"username": "maintainer", "password": "right-password-123"})
    return browser


def exempt(browser: Browser) -> str:
    """Save an exemption of a file of its own on the exemptions page; its pattern."""
    match = f"test/test_replica_{uuid.uuid4().hex[:10]}.py"
    page = browser.post(EXEMPTIONS, {"match": match, "kind": "intended", "note": "no such op"})
    assert f"Exemption saved: {match}" in page
    return match


def test_pages_read_the_replica_and_a_writer_reads_its_own_write(live, project, standby):
    writer, reader = maintainer(live, project), Browser(live.base_url)
    first = exempt(writer)
    standby.catch_up()
    assert first in reader.get(EXEMPTIONS)

    standby.pause_replay()
    try:
        # The exemption is on the primary, and the writer's redirect (above, in exempt) and its
        # next pages read it there: the replica has not replayed the writer's write.
        second = exempt(writer)
        assert writer.cookie(WROTE_COOKIE)
        assert second in writer.get(EXEMPTIONS)
        # Another reader's page and read API answer from the paused replica, which lacks it.
        assert first in reader.get(EXEMPTIONS) and second not in reader.get(EXEMPTIONS)
        assert second not in reader.get(MANIFEST)
        # The triage list reads the primary whatever the replica.
        assert second in reader.get("/api/v1/projects/pytorch-xla/triage/")
    finally:
        standby.resume_replay()
    standby.catch_up()
    assert second in reader.get(EXEMPTIONS) and second in reader.get(MANIFEST)
    # Past the writer's write, the replica serves the writer too, and its cookie goes.
    assert second in writer.get(EXEMPTIONS)
    assert writer.cookie(WROTE_COOKIE) is None
    (readers,) = standby.query(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (REPLICA_READER,)
    )
    assert readers > 0


def test_a_replica_behind_by_more_than_the_limit_is_not_read(live, project, standby):
    writer, reader = maintainer(live, project), Browser(live.base_url)
    standby.catch_up()  # its last replayed commit is fresh: the lag counts from it
    standby.pause_replay()
    paused = time.monotonic()
    try:
        match = exempt(writer)
        assert match not in reader.get(EXEMPTIONS)  # behind, within the limit: still read
        wait_for(
            lambda: match in reader.get(EXEMPTIONS),
            seconds=MAX_LAG_SECONDS + 30,
            what="the reader's page to come from the primary",
        )
        assert time.monotonic() - paused >= MAX_LAG_SECONDS - 1
    finally:
        standby.resume_replay()


def test_with_the_replica_down_pages_read_the_primary(live, project, standby):
    writer, reader = maintainer(live, project), Browser(live.base_url)
    standby.catch_up()
    assert reader.get(EXEMPTIONS)  # the web's replica connections are open
    live.mark_logs()
    standby.stop()
    try:
        match = exempt(writer)
        for _ in range(8):  # both gunicorn processes, several threads each
            assert match in reader.get(EXEMPTIONS)
            assert match in reader.get(MANIFEST)
            assert reader.get("/p/pytorch-xla/")
        assert "read replica failed" in live.log_since_mark(live.web)
    finally:
        standby.restart()
