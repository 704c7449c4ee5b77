"""The GitLab adapter against the local fake GitLab: issues and merge requests read a batch a
request with pages followed, one ETag per batch, rate limits, filing."""

import datetime
import urllib.parse

import pytest

from parity.trackers import IssueAddress, RateLimited, RepoAddress, TrackerUnavailable, tracker_for
from tests.fake_tracker import Scripted, gitlab_issue

HOST = "gitlab.example.com"
PROJECT = "tpu/runtime/xla"
REPO = RepoAddress("gitlab", HOST, PROJECT)


def at(iid: int, kind: str = "issue") -> IssueAddress:
    return IssueAddress("gitlab", HOST, PROJECT, iid, kind)


@pytest.fixture
def gitlab(fake_tracker):
    for iid in range(1, 6):
        state = "closed" if iid % 2 else "opened"
        fake_tracker.add_gitlab(PROJECT, gitlab_issue(iid, f"issue {iid}", state=state))
    fake_tracker.add_gitlab(
        PROJECT, gitlab_issue(7, "Lower nonzero", state="merged"), resource="merge_requests"
    )
    return tracker_for("gitlab", HOST)


def test_a_batch_is_one_request_of_iids_with_its_pages_followed(gitlab, fake_tracker):
    fake_tracker.page_size = 2
    wanted = [(at(iid), "") for iid in (5, 1, 2, 3, 4, 6)] + [(at(7, "merge_request"), "")]

    fetched = {f.address.number: f for f in gitlab.fetch(wanted)}

    states = {n: (f.facts.state if f.facts else f.error) for n, f in fetched.items()}
    assert states == {
        1: "closed",
        2: "open",
        3: "closed",
        4: "open",
        5: "closed",
        6: "not found (404)",
        7: "closed",  # merged
    }
    assert fetched[1].facts.closed_at == datetime.datetime(2026, 3, 2, 10, tzinfo=datetime.UTC)
    issues = [s for s in fake_tracker.requests if "/issues?" in s.path]
    assert len(issues) == 3  # 5 issues found, 2 a page
    first = urllib.parse.parse_qs(urllib.parse.urlsplit(issues[0].path).query)
    assert first["iids[]"] == ["1", "2", "3", "4", "5", "6"]  # sorted: the same batch, the same URL
    assert fetched[1].etag == ""  # several pages: no one ETag stands for the batch
    assert {s.headers["private-token"] for s in fake_tracker.requests} == {"read-token"}


def test_a_batch_read_again_with_its_etag_answers_304_for_all(gitlab, fake_tracker):
    first = list(gitlab.fetch([(at(1), ""), (at(2), "")]))
    etag = first[0].etag
    assert etag and first[1].etag == etag

    again = list(gitlab.fetch([(at(1), etag), (at(2), etag)]))

    assert [f.unchanged for f in again] == [True, True]
    assert fake_tracker.requests[-1].headers["if-none-match"] == etag
    assert fake_tracker.requests[-1].status == 304


def test_a_429_stops_until_the_reset(gitlab, fake_tracker):
    reset = int(datetime.datetime(2030, 1, 1, tzinfo=datetime.UTC).timestamp())
    fake_tracker.script(
        Scripted(429, {"RateLimit-Remaining": "0", "RateLimit-Reset": str(reset)}, {})
    )

    with pytest.raises(RateLimited) as limited:
        list(gitlab.fetch([(at(1), "")]))

    assert limited.value.resume_at == datetime.datetime(2030, 1, 1, tzinfo=datetime.UTC)


def test_a_server_error_is_the_hosts_trouble(gitlab, fake_tracker):
    fake_tracker.script(Scripted(503, {}, {}))

    with pytest.raises(TrackerUnavailable, match="503"):
        list(gitlab.fetch([(at(1), "")]))


def test_an_issue_is_filed_with_a_write_token(fake_tracker, settings):
    settings.PARITY_TRACKER_WRITE_TOKENS = {HOST: fake_tracker.write_token}

    created = tracker_for("gitlab", HOST, write=True).create(
        REPO, title="tpu: skipped", body="the tests", labels=["tpu", "parity"]
    )

    assert created.address == at(1)
    assert created.url == f"https://{HOST}/{PROJECT}/-/issues/1"
    assert fake_tracker.seen("POST")[0].body == {
        "title": "tpu: skipped",
        "description": "the tests",
        "labels": "tpu,parity",
    }


def test_the_new_issue_page_takes_labels_as_a_quick_action(gitlab):
    url = gitlab.new_issue_url(REPO, title="t", body="b", labels=["tpu", "needs triage"])

    base, query = url.split("?")
    assert base == f"https://{HOST}/{PROJECT}/-/issues/new"
    assert urllib.parse.parse_qs(query) == {
        "issue[title]": ["t"],
        "issue[description]": ['b\n\n/label ~"tpu" ~"needs triage"'],
    }
