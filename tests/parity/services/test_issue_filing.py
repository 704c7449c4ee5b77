"""Drafting and filing issues (``parity.services.issue_filing``): the draft's text, the new-issue
URL cut to a length trackers accept, and filing through GitLab's adapter too (the fake tracker)."""

import urllib.parse

import pytest

from parity.models import Project, Triage
from parity.selectors import issue_subject
from parity.services import issue_filing
from tests.parity.engine.rows import gap_open, reason_of, run_make

A = "test/test_ops.py::TestOps::"


@pytest.fixture
def many_gaps(project):
    run = run_make(project, "tpu")
    reason = reason_of(project, "XLA does not support complex64")
    return [
        gap_open(project, "tpu", f"{A}test_{n:03}_complex64", "skipped", run=run, reason=reason)
        for n in range(300)
    ]


def test_the_draft_names_the_tests_the_reason_and_first_seen(project, many_gaps):
    subject = issue_subject(project=project, gap_ids=[g.pk for g in many_gaps[:2]])

    draft = issue_filing.issue_draft(project=project, subject=subject)

    assert draft.title == "[tpu] 2 tests skipped: XLA does not support complex64"
    lines = draft.body.splitlines()
    assert (
        lines[0] == "On tpu, 2 tests do not pass while passing on cpu (parity's reference backend)."
    )
    assert "Reason: `XLA does not support complex64`" in lines
    assert "First seen: 2026-04-01" in lines
    assert (
        lines[-1]
        == "Filed from parity: http://127.0.0.1:8000/p/pytorch-xla/gaps/?open=1&backend=tpu"
    )
    row = f"| [`{A}test_000_complex64`](http://127.0.0.1:8000/p/pytorch-xla/tests/"
    assert any(line.startswith(row) for line in lines)


def test_a_new_issue_url_keeps_under_the_length_trackers_accept(project, many_gaps, settings):
    settings.SITE_URL = "https://parity.example.org"
    subject = issue_subject(project=project, gap_ids=[g.pk for g in many_gaps])
    draft = issue_filing.issue_draft(project=project, subject=subject)
    assert draft.body.count("\n| [") == 100  # a created issue lists the first hundred

    url = issue_filing.new_issue_url(project=project, subject=subject, draft=draft)

    assert len(url) <= issue_filing.URL_CHARS
    body = urllib.parse.parse_qs(url.split("?", 1)[1])["body"][0]
    listed = body.count("\n| [")
    assert 0 < listed < 100
    assert f"| … and {300 - listed} more | | | |" in body


def test_no_repository_no_filing(project, many_gaps):
    Project.objects.filter(pk=project.pk).update(issue_url_template="https://b.corp/{number}")
    project.refresh_from_db()
    subject = issue_subject(project=project, gap_ids=[many_gaps[0].pk])

    assert issue_filing.filing_for(project=project).repo is None
    draft = issue_filing.issue_draft(project=project, subject=subject)
    assert issue_filing.new_issue_url(project=project, subject=subject, draft=draft) is None


def test_an_issue_is_filed_on_gitlab_and_linked(project, many_gaps, fake_tracker, settings):
    template = "https://gitlab.example.com/tpu/xla/-/issues/{number}"
    Project.objects.filter(pk=project.pk).update(issue_url_template=template)
    project.refresh_from_db()
    settings.PARITY_TRACKER_WRITE_TOKENS = {"gitlab.example.com": fake_tracker.write_token}
    subject = issue_subject(project=project, gap_ids=[many_gaps[0].pk])
    draft = issue_filing.issue_draft(project=project, subject=subject)

    filed = issue_filing.issue_file(project=project, subject=subject, draft=draft)

    assert filed.url == "https://gitlab.example.com/tpu/xla/-/issues/1"
    assert (filed.linked, filed.link_error) == (1, "")
    assert filed.issue.key == "gitlab.example.com/tpu/xla#1"
    (triage,) = Triage.objects.all()
    assert (triage.test_id, triage.kind, triage.issue_id) == (
        many_gaps[0].test_id,
        "tracked",
        filed.issue.pk,
    )


def test_a_tracker_answering_a_script_url_files_but_links_nothing(
    project, many_gaps, fake_tracker, settings
):
    """The tracker's answer becomes a link on every page: only an http(s) one is stored."""
    from parity.trackers import CreateRefused
    from tests.fake_tracker import Scripted, gitlab_issue

    template = "https://gitlab.example.com/tpu/xla/-/issues/{number}"
    Project.objects.filter(pk=project.pk).update(issue_url_template=template)
    project.refresh_from_db()
    settings.PARITY_TRACKER_WRITE_TOKENS = {"gitlab.example.com": fake_tracker.write_token}
    answer = gitlab_issue(1, "t", web_url="javascript:alert(document.domain)//://x")
    fake_tracker.script(Scripted(201, {"Content-Type": "application/json"}, answer))
    subject = issue_subject(project=project, gap_ids=[many_gaps[0].pk])
    draft = issue_filing.issue_draft(project=project, subject=subject)

    with pytest.raises(CreateRefused, match=r"not http\(s\)"):
        issue_filing.issue_file(project=project, subject=subject, draft=draft)
    assert not Triage.objects.exists()
    assert not project.issues.exists()
