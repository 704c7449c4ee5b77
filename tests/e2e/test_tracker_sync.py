"""Issue 14's done-when, on the live stack (gunicorn + a Celery worker over Redis) with a local
fake GitHub (``tests/fake_tracker.py``) holding some closed issues:

- the sync (the beat task ``parity.tasks.issues_sync``, sent through the broker as beat sends
  it) marks exactly the gaps that cite only closed issues ``tracked_closed``: in the API, on the
  gaps page and in the weekly digest;
- it survives a rate limit (403 with Retry-After) and a server error (502) without losing any
  state it had read;
- a maintainer, logged in over HTTP, files an issue from a gap and sees it linked.

The stack is this module's own (it overrides ``stack``): its processes get the tracker's
settings in their environment.
"""

import http.cookiejar
import re
import time
import urllib.parse
import urllib.request
import uuid
from html import unescape
from html.parser import HTMLParser

import pytest
from django.contrib.auth import get_user_model

from parity.models import Membership, Role, TrackingIssue
from parity.services.projects import upload_token_create
from tests.e2e.client import ApiClient
from tests.e2e.conftest import REDIS_URL, stack_started
from tests.e2e.expect import upload_settled
from tests.e2e.stack import LiveStack, wait_for
from tests.fake_tracker import FakeTracker, Scripted, github_issue
from tests.parity.conftest import run_xml

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SYNC = "parity.tasks.issues_sync"
XLA = "https://github.com/pytorch/xla/issues"
A = "test/test_ops.py::TestOps::"
CPU = {f"{A}test_{n}": "passed" for n in range(1, 7)}
TPU = {
    f"{A}test_1": ("skipped", f"XLA has no complex64, see {XLA}/101"),
    f"{A}test_2": ("skipped", f"XLA has no complex64, see {XLA}/101"),
    f"{A}test_3": ("skipped", f"lowering, see {XLA}/102 and {XLA}/103"),  # one still open
    f"{A}test_4": ("failed", f"flaky, see {XLA}/102"),
    f"{A}test_5": ("skipped", "not implemented yet"),  # untracked
    f"{A}test_6": "passed",
}
CLOSED_ONLY = [f"{A}test_1", f"{A}test_2", f"{A}test_4"]


@pytest.fixture(scope="module")
def github():
    with FakeTracker() as fake:
        fake.add_github("pytorch/xla", github_issue(101, "XLA has no complex64", state="closed"))
        fake.add_github("pytorch/xla", github_issue(102, "Lower aten::nonzero", state="closed"))
        fake.add_github("pytorch/xla", github_issue(103, "Lowering tracker"))
        yield fake


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory, github):
    """This module's stack (the e2e ``live`` fixture serves it): its processes read and file
    issues on the fake GitHub."""
    yield from stack_started(
        tmp_path_factory,
        {
            "PARITY_TRACKER_API_URLS": f"github.com={github.github_api}",
            "PARITY_TRACKER_TOKENS": f"github.com={github.token}",
            "PARITY_TRACKER_WRITE_TOKENS": f"github.com={github.write_token}",
            # Every tick reads every due issue, and an issue is due again a minute later.
            "PARITY_TRACKER_SYNC_SECONDS": "60",
            "PARITY_TRACKER_SYNC_TICK_SECONDS": "60",
            # As production runs it: a host's pause is seen by every worker process.
            "CACHE_URL": REDIS_URL,
        },
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
    assert upload_settled(api, reply.body["id"], seconds=60, live=live)["status"] == "done"


def tick(live: LiveStack, github: FakeTracker, *, answers: int) -> None:
    """Send one sync tick through the broker and wait until the fake tracker answered
    ``answers`` more requests and the worker is idle again."""
    before = len(github.requests)
    live.send_task(SYNC)
    wait_for(
        lambda: len(github.requests) >= before + answers and live.worker_idle(),
        seconds=30,
        what=f"a sync tick with {answers} tracker requests",
    )
    assert len(github.requests) == before + answers, [s.path for s in github.requests[before:]]


def states() -> dict[int, str]:
    return {int(i.url.rsplit("/", 1)[1]): i.state for i in TrackingIssue.objects.all()}


def gaps(api: ApiClient, query: str = "") -> dict[str, dict]:
    reply = api.request("GET", f"/api/v1/projects/pytorch-xla/gaps/?limit=100{query}")
    assert reply.status == 200, str(reply)
    return {gap["test"]: gap for gap in reply.body["results"]}


def test_sync_marks_gaps_citing_only_closed_issues_through_faults_and_a_maintainer_files_one(
    live, github, project
):
    api = ApiClient(base_url=live.base_url, token=upload_token_create(project=project))
    upload(api, live, "cpu", CPU)
    upload(api, live, "tpu", TPU)
    wait_for(lambda: len(gaps(api)) == 5, seconds=60, what="the tpu run's five gaps")
    assert states() == {101: "unknown", 102: "unknown", 103: "unknown"}

    # A rate limit after the first answer: that answer is kept, the rest wait for the reset.
    github.script(
        Scripted(200, {}, github.github["pytorch/xla", 101]),
        Scripted(403, {"Retry-After": "3"}, {"message": "You have exceeded a rate limit"}),
    )
    tick(live, github, answers=2)
    assert states() == {101: "closed", 102: "unknown", 103: "unknown"}
    tick(live, github, answers=0)  # within Retry-After: the host is left alone
    time.sleep(3)  # past Retry-After

    # A server error: nothing read is lost, the tick gives up on the host until the next.
    github.script(Scripted(502, {}, {"message": "Bad gateway"}))
    tick(live, github, answers=1)
    assert states() == {101: "closed", 102: "unknown", 103: "unknown"}
    assert {g["test"] for g in gaps(api, "&tracked_closed=true").values()} == {
        f"{A}test_1",
        f"{A}test_2",
    }

    tick(live, github, answers=2)  # 102 and 103; 101 was read less than a minute ago
    assert states() == {101: "closed", 102: "closed", 103: "open"}

    listed = gaps(api)
    assert sorted(t for t, g in listed.items() if g["tracked_closed"]) == CLOSED_ONLY
    assert listed[f"{A}test_3"]["tracked"] and not listed[f"{A}test_3"]["tracked_closed"]
    assert sorted(gaps(api, "&tracked_closed=true")) == CLOSED_ONLY
    parity = api.request("GET", "/api/v1/projects/pytorch-xla/parity/").body
    tpu = next(b for b in parity["backends"] if b["backend"] == "tpu")
    assert (tpu["tracked"], tpu["tracked_closed"], tpu["untracked"]) == (4, 3, 1)

    page = page_text(live, "/p/pytorch-xla/gaps/?open=1&tracked=closed")
    for test in CLOSED_ONLY:
        assert test.rsplit("::", 1)[1] in page
    assert "test_3" not in page and "test_5" not in page
    assert "tracked · issue closed" in page
    assert "pytorch/xla#101 XLA has no complex64 (closed)" in page

    digest = page_text(live, "/p/pytorch-xla/digest/")
    assert "3 tpu gaps cite issues closed since 2 Mar 2026" in digest

    # A maintainer files an issue for the untracked gap and sees it linked.
    browser = Browser(live.base_url)
    browser.log_in(maintainer_of(project))
    untracked = listed[f"{A}test_5"]
    form = browser.form(f"/p/pytorch-xla/file-issue/?gap={untracked['id']}", "issue-form")
    assert form["title"] == "[tpu] test/test_ops.py::TestOps::test_5 skipped: not implemented yet"
    answer = browser.post("/p/pytorch-xla/file-issue/", form)

    assert "Filed https://github.com/pytorch/xla/issues/104 and linked it to 1 gap(s)" in answer
    assert "pytorch/xla#104 [tpu] test/test_ops.py::TestOps::test_5 skipped" in answer
    filed = gaps(api)[f"{A}test_5"]
    assert (filed["tracked"], filed["triage"], filed["issues"]) == (
        True,
        "tracked",
        [f"{XLA}/104"],
    )
    assert github.github["pytorch/xla", 104]["title"] == form["title"]


def maintainer_of(project) -> tuple[str, str]:
    user = get_user_model().objects.create_user("maintainer", password="a-long-password")
    Membership.objects.create(user=user, project=project, role=Role.MAINTAINER)
    return "maintainer", "a-long-password"


def page_text(live: LiveStack, path: str) -> str:
    with urllib.request.urlopen(f"{live.base_url}{path}", timeout=30) as response:
        return _text(response.read())


def _text(html: bytes) -> str:
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html.decode())))


class Browser:
    """A session over HTTP: cookies kept, forms read from the page and posted back."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )

    def get(self, path: str) -> bytes:
        with self.opener.open(f"{self.base_url}{path}", timeout=30) as response:
            return response.read()

    def post(self, path: str, fields: dict) -> str:
        data = urllib.parse.urlencode(fields, doseq=True).encode()
        with self.opener.open(f"{self.base_url}{path}", data=data, timeout=30) as response:
            return _text(response.read())

    def form(self, path: str, form_class: str | None = None) -> dict:
        """The fields of the page's form (the one with ``form_class``, else the first)."""
        reader = _FormReader(form_class)
        reader.feed(self.get(path).decode())
        return reader.fields

    def log_in(self, credentials: tuple[str, str]) -> None:
        form = self.form("/accounts/login/")
        username, password = credentials
        page = self.post("/accounts/login/", {**form, "username": username, "password": password})
        assert "Log out" in page or "log out" in page.lower(), page[:500]


class _FormReader(HTMLParser):
    def __init__(self, form_class: str | None) -> None:
        super().__init__()
        self.form_class = form_class
        self.fields: dict = {}
        self._in_form = False
        self._done = False
        self._textarea: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form" and not self._done:
            self._in_form = self.form_class is None or self.form_class in (attrs.get("class") or "")
        if not self._in_form:
            return
        if tag == "input" and attrs.get("name") and attrs.get("type") not in ("submit", "button"):
            if attrs.get("type") == "checkbox" and "checked" not in attrs:
                return
            name, value = attrs["name"], attrs.get("value") or ""
            if name in self.fields:  # repeated (gap ids): a list, as urlencode(doseq) posts it
                held = self.fields[name]
                self.fields[name] = [*(held if isinstance(held, list) else [held]), value]
            else:
                self.fields[name] = value
        elif tag == "textarea":
            self._textarea = attrs["name"]
            self.fields[self._textarea] = ""

    def handle_data(self, data):
        if self._textarea:
            self.fields[self._textarea] += data

    def handle_endtag(self, tag):
        if tag == "textarea":
            if self._textarea:  # Django writes a newline after <textarea>; browsers drop it
                self.fields[self._textarea] = self.fields[self._textarea].removeprefix("\n")
            self._textarea = None
        elif tag == "form" and self._in_form:
            self._in_form, self._done = False, True
