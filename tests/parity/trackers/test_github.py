"""The GitHub adapter against the local fake GitHub (``tests/fake_tracker.py``): issues and pull
requests by number, conditional requests, rate limits, server errors, redirects, filing."""

import datetime
import urllib.parse

import pytest

from parity.trackers import (
    CreateRefused,
    IssueAddress,
    IssueFacts,
    RateLimited,
    RepoAddress,
    TrackerUnavailable,
    tracker_for,
)
from tests.fake_tracker import Scripted, github_issue

XLA = "pytorch/xla"
REPO = RepoAddress("github", "github.com", XLA)


def at(number: int, kind: str = "issue") -> IssueAddress:
    return IssueAddress("github", "github.com", XLA, number, kind)


@pytest.fixture
def github(fake_tracker):
    fake_tracker.add_github(
        XLA,
        github_issue(
            9017,
            "XLA does not support complex64",
            state="closed",
            labels=["xla:tpu", "bug"],
            assignee="alice",
            closed_at="2026-03-02T10:00:00Z",
        ),
    )
    fake_tracker.add_github(XLA, github_issue(12, "Lower aten::nonzero", pull_request={"url": "x"}))
    return tracker_for("github", "github.com")


def test_issues_and_pull_requests_are_read_by_number(github, fake_tracker):
    issue, pull, missing = list(github.fetch([(at(9017), ""), (at(12, "pull"), ""), (at(5), "")]))

    assert issue.facts == IssueFacts(
        state="closed",
        title="XLA does not support complex64",
        labels=("xla:tpu", "bug"),
        assignee="alice",
        closed_at=datetime.datetime(2026, 3, 2, 10, tzinfo=datetime.UTC),
    )
    assert issue.etag.startswith('W/"')
    assert (pull.facts.state, pull.facts.title) == ("open", "Lower aten::nonzero")
    assert (missing.facts, missing.error) == (None, "not found (404)")
    paths = [seen.path for seen in fake_tracker.requests]
    assert paths == [f"/github/repos/{XLA}/issues/{n}" for n in (9017, 12, 5)]
    assert {seen.headers["authorization"] for seen in fake_tracker.requests} == {
        "Bearer read-token"
    }


def test_a_stored_etag_makes_the_request_conditional_and_a_304_costs_no_quota(github, fake_tracker):
    (first,) = github.fetch([(at(9017), "")])
    quota = fake_tracker.quota

    (again,) = github.fetch([(at(9017), first.etag)])

    assert (again.unchanged, again.facts, again.etag) == (True, None, first.etag)
    assert fake_tracker.requests[-1].headers["if-none-match"] == first.etag
    assert fake_tracker.quota == quota
    assert github.quota.conditional_hits == 1


def test_a_403_with_retry_after_stops_the_batch_after_what_was_read(github, fake_tracker):
    fake_tracker.script(
        Scripted(200, {"ETag": '"a"'}, github_issue(1, "one")),
        Scripted(403, {"Retry-After": "120"}, {"message": "secondary rate limit"}),
    )
    read = []
    before = datetime.datetime.now(datetime.UTC)

    with pytest.raises(RateLimited) as limited:
        for fetched in github.fetch([(at(1), ""), (at(2), ""), (at(3), "")]):
            read.append(fetched.address.number)

    assert read == [1]
    assert len(fake_tracker.requests) == 2  # issue 3 was never asked for
    waited = limited.value.resume_at - before
    assert datetime.timedelta(seconds=119) < waited < datetime.timedelta(seconds=125)


def test_no_quota_left_waits_for_the_reset_the_headers_give(github, fake_tracker):
    fake_tracker.quota = 0

    with pytest.raises(RateLimited) as limited:
        list(github.fetch([(at(9017), "")]))

    reset = datetime.datetime.fromtimestamp(fake_tracker.reset_at, datetime.UTC)
    assert limited.value.resume_at == reset


def test_reaching_the_reserve_stops_after_using_the_answer(fake_tracker, settings, github):
    settings.PARITY_TRACKER_RATE_RESERVE = fake_tracker.quota - 1
    tracker = tracker_for("github", "github.com")
    read = []

    with pytest.raises(RateLimited, match="requests left"):
        for fetched in tracker.fetch([(at(9017), ""), (at(12), "")]):
            read.append(fetched.facts.title)

    assert read == ["XLA does not support complex64"]


def test_a_403_that_is_no_rate_limit_is_this_issues_error(github, fake_tracker):
    fake_tracker.script(Scripted(403, {}, {"message": "Resource not accessible"}))

    (fetched,) = github.fetch([(at(9017), "")])

    assert fetched.error == "no access (403)"


def test_a_server_error_is_the_hosts_trouble(github, fake_tracker):
    fake_tracker.script(Scripted(502, {}, {"message": "Bad gateway"}))

    with pytest.raises(TrackerUnavailable, match="502"):
        list(github.fetch([(at(9017), "")]))


def test_an_unreachable_host_is_unavailable(settings):
    settings.PARITY_TRACKER_API_URLS = {"github.com": "http://127.0.0.1:9"}  # discard port
    settings.PARITY_TRACKER_TOKENS = {"github.com": "t"}

    with pytest.raises(TrackerUnavailable):
        list(tracker_for("github", "github.com").fetch([(at(1), "")]))


def test_a_redirect_is_followed_on_the_same_host_only(github, fake_tracker):
    moved = f"{fake_tracker.github_api}/repos/{XLA}/issues/9017"
    fake_tracker.script(Scripted(301, {"Location": moved}))
    (transferred,) = github.fetch([(at(4), "")])
    assert transferred.facts.title == "XLA does not support complex64"

    fake_tracker.script(Scripted(301, {"Location": "http://elsewhere.invalid/repos/x/y/issues/1"}))
    (elsewhere,) = github.fetch([(at(4), "")])
    assert elsewhere.error == "refused (301)"
    assert len(fake_tracker.requests) == 3  # the token went nowhere else


def test_an_issue_is_filed_with_a_write_token(fake_tracker, settings):
    settings.PARITY_TRACKER_WRITE_TOKENS = {"github.com": fake_tracker.write_token}
    tracker = tracker_for("github", "github.com", write=True)

    created = tracker.create(REPO, title="tpu: 3 tests skipped", body="…", labels=["xla:tpu"])

    assert created.address == at(1)
    assert created.url == f"https://github.com/{XLA}/issues/1"
    assert (created.facts.state, created.facts.labels) == ("open", ("xla:tpu",))
    sent = fake_tracker.seen("POST")[0]
    assert sent.body == {"title": "tpu: 3 tests skipped", "body": "…", "labels": ["xla:tpu"]}


def test_filing_without_permission_is_refused(github):
    with pytest.raises(CreateRefused, match="401"):
        github.create(REPO, title="x", body="y", labels=[])


def test_the_new_issue_page_is_prefilled_through_its_url(github):
    url = github.new_issue_url(REPO, title="tpu: skipped", body="a\nb", labels=["xla:tpu", "bug"])

    base, query = url.split("?")
    assert base == f"https://github.com/{XLA}/issues/new"
    assert urllib.parse.parse_qs(query) == {
        "title": ["tpu: skipped"],
        "body": ["a\nb"],
        "labels": ["xla:tpu,bug"],
    }
