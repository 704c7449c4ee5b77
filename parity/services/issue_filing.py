"""Filing an issue from parity: a maintainer picks a gap, several, or a skip reason; parity
drafts the issue (title, a body listing the tests, backends, reason and first seen with links
back to parity, the project's ``new_issue_labels``) in the repository of the project's issue URL
template, and then either

- creates it through the tracker's adapter (``parity.trackers``), when
  ``PARITY_TRACKER_WRITE_TOKENS`` has a token for that host, and links it as a tracked triage
  of those gaps (or of the reason, or of the test file on its backend) in the same step, so
  the gaps count tracked at once; or
- gives the tracker's own "new issue" page, prefilled through its URL parameters, for the
  maintainer to file by hand (and link afterwards, as any issue).
"""

import logging
import urllib.parse
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from parity.models import Project, TrackingIssue, TriageKind
from parity.pure.web_urls import web_url_problem
from parity.selectors.issue_drafts import IssueSubject
from parity.services.triage import (
    TriageRejected,
    TriageRequest,
    tracking_issue_get_or_create,
    triage_create,
    triages_create,
)
from parity.trackers import Created, CreateRefused, RepoAddress, repo_address, tracker_for

logger = logging.getLogger(__name__)

TITLE_CHARS = 200
REASON_CHARS = 300
URL_CHARS = 7500  # browsers and trackers refuse longer new-issue URLs; the body is cut to fit
BODY_ROWS = 100  # tests listed in a created issue's body; the rest are counted, with a link


@dataclass(frozen=True)
class Filing:
    """Where a project's issues go and whether parity may create them there."""

    repo: RepoAddress | None  # None: the project's issue URL template names no GitHub/GitLab
    can_create: bool  # a write token for the repository's host


@dataclass(frozen=True)
class IssueDraft:
    title: str
    body: str
    labels: list[str]


@dataclass(frozen=True)
class Filed:
    issue: TrackingIssue
    url: str
    linked: int  # triages made
    link_error: str  # why the triage was not made ("" when it was)


def filing_for(*, project: Project) -> Filing:
    repo = repo_address(project.issue_url_template)
    can_create = bool(repo and settings.PARITY_TRACKER_WRITE_TOKENS.get(repo.host))
    return Filing(repo=repo, can_create=can_create)


def _absolute(path: str) -> str:
    return f"{settings.SITE_URL}{path}"


def _states(subject: IssueSubject) -> str:
    states = sorted({gap.state for gap in subject.gaps})
    return "/".join(states) if states else "not passing"


def draft_title(subject: IssueSubject) -> str:
    """``[tpu] test/a.py::T::t skipped: <reason>`` for one gap; ``[tpu, neuron] 5 tests
    skipped: <reason>`` for several."""
    backends = ", ".join(subject.backends) or "?"
    gaps = subject.gaps
    what = gaps[0].test if len(gaps) == 1 else f"{len(gaps) + subject.more} tests"
    reasons = {gap.reason for gap in gaps if gap.reason}
    if subject.file is not None and len(gaps) > 1:
        what = f"{subject.file}: {what}"
    title = f"[{backends}] {what} {_states(subject)}"
    if len(reasons) == 1:
        title += f": {reasons.pop()}"
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…"


def draft_body(*, project: Project, subject: IssueSubject, rows: int = BODY_ROWS) -> str:
    """Markdown: what is wrong, the reason, a table of the tests (at most ``rows``) with their
    backend, state and first seen, each linked to its parity page, and where to see them all."""
    gaps = subject.gaps
    reference = subject.reference or "the reference backend"
    count = len(gaps) + subject.more
    noun = "test does" if count == 1 else "tests do"
    lines = [
        f"On {', '.join(subject.backends)}, {count} {noun} not pass while passing on "
        f"{reference} (parity's reference backend).",
        "",
    ]
    reasons = sorted({gap.reason for gap in gaps if gap.reason})
    if len(reasons) == 1:
        lines += [f"Reason: `{_code(reasons[0])}`", ""]
    first = min((gap.opened_at for gap in gaps), default=None)
    if first is not None:
        lines += [f"First seen: {first:%Y-%m-%d}", ""]
    lines += ["| Test | Backend | State | First seen |", "|---|---|---|---|"]
    for gap in gaps[:rows]:
        url = _absolute(reverse("project-test", kwargs={"slug": project.slug, "pk": gap.test_id}))
        state = gap.state if len(reasons) == 1 or not gap.reason else f"{gap.state}: {gap.reason}"
        lines.append(
            f"| [`{_code(gap.test)}`]({url}) | {gap.backend} | {_cell(state)} "
            f"| {gap.opened_at:%Y-%m-%d} |"
        )
    left = count - min(rows, len(gaps))
    gaps_url = _absolute(_gaps_path(project, subject))
    if left:
        lines.append(f"| … and {left} more | | | |")
    lines += ["", f"Filed from parity: {gaps_url}"]
    return "\n".join(lines)


def _gaps_path(project: Project, subject: IssueSubject) -> str:
    query = {"open": "1"}
    if len(subject.backends) == 1:
        query["backend"] = subject.backends[0]
    if subject.file is not None:
        query["file"] = subject.file
    path = reverse("project-gaps", kwargs={"slug": project.slug})
    return f"{path}?{urllib.parse.urlencode(query)}"


def _code(text: str) -> str:
    text = " ".join(text.split())[:REASON_CHARS]
    return text.replace("`", "'")


def _cell(text: str) -> str:
    return " ".join(text.split())[:REASON_CHARS].replace("|", "\\|")


def issue_draft(*, project: Project, subject: IssueSubject) -> IssueDraft:
    return IssueDraft(
        title=draft_title(subject),
        body=draft_body(project=project, subject=subject),
        labels=[str(label) for label in project.new_issue_labels or []],
    )


def new_issue_url(*, project: Project, subject: IssueSubject, draft: IssueDraft) -> str | None:
    """The tracker's prefilled "new issue" page for ``draft`` (None: no repository), its body
    cut to fewer rows until the URL is short enough for browsers and trackers."""
    filing = filing_for(project=project)
    if filing.repo is None:
        return None
    tracker = tracker_for(filing.repo.tracker, filing.repo.host)
    body, rows = draft.body, BODY_ROWS
    while True:
        url = tracker.new_issue_url(filing.repo, title=draft.title, body=body, labels=draft.labels)
        if len(url) <= URL_CHARS or rows == 0:
            return url
        rows //= 2
        body = draft_body(project=project, subject=subject, rows=rows)


def issue_file(*, project: Project, subject: IssueSubject, draft: IssueDraft, user=None) -> Filed:
    """Create the issue ``draft`` describes through the tracker (raises ``TrackerError``:
    refused, rate limited, unavailable) and link it as a tracked triage of ``subject``'s gaps,
    of its reason (on its backend, or every one), or of its file on its backend. The issue is
    created first, outside any transaction; a triage the rules then refuse (a gap fixed
    meanwhile) leaves the issue filed and says why in ``link_error``."""
    filing = filing_for(project=project)
    if not filing.can_create:
        raise ValueError(f"No write token for the tracker of project '{project.slug}'.")
    tracker = tracker_for(filing.repo.tracker, filing.repo.host, write=True)
    created = tracker.create(filing.repo, title=draft.title, body=draft.body, labels=draft.labels)
    if web_url_problem(created.url):  # the tracker's answer becomes a link on every page
        raise CreateRefused(
            f"The tracker answered an issue URL that is not http(s): {created.url!r}"
        )
    logger.info("issue %s filed for project %s by %s", created.url, project.pk, user)
    issue = _issue_store(project=project, created=created)
    try:
        linked = _link(project=project, subject=subject, url=created.url, user=user)
    except TriageRejected as exc:
        return Filed(issue=issue, url=created.url, linked=0, link_error=str(exc))
    return Filed(issue=issue, url=created.url, linked=linked, link_error="")


def _issue_store(*, project: Project, created: Created) -> TrackingIssue:
    """The new issue as a tracking issue, with what the tracker answered (no sync needed)."""
    with transaction.atomic():
        issue = tracking_issue_get_or_create(project=project, url=created.url)
        TrackingIssue.objects.filter(pk=issue.pk).update(
            state=created.facts.state,
            title=created.facts.title,
            labels=list(created.facts.labels),
            synced_at=timezone.now(),
        )
    issue.refresh_from_db()
    return issue


def _link(*, project: Project, subject: IssueSubject, url: str, user) -> int:
    if subject.file is not None:
        # The file on its backend, as the queue's exemption: later gaps there are tracked too.
        request = TriageRequest(
            kind=TriageKind.TRACKED, match=subject.file, backend=subject.backend, issue_url=url
        )
        triage_create(project=project, request=request, user=user)
        return 1
    if subject.reason_id is not None:
        request = TriageRequest(
            kind=TriageKind.TRACKED,
            reason=subject.reason_id,
            backend=subject.backend or None,
            issue_url=url,
        )
        triage_create(project=project, request=request, user=user)
        return 1
    requests = [
        TriageRequest(kind=TriageKind.TRACKED, gap=gap.id, issue_url=url) for gap in subject.gaps
    ]
    return len(triages_create(project=project, requests=requests, user=user))
