"""Issue trackers behind one small interface (``base.Tracker``): GitHub (``github``) and GitLab
(``gitlab``); another tracker (JIRA) is one more module and one more line in ``ADAPTERS``.

Which tracker an issue lives on comes from its URL: ``…/-/issues/N`` or ``…/-/merge_requests/N``
is GitLab on any host; ``…/owner/repo/issues/N`` or ``…/pull/N`` is GitHub on github.com or on a
host given an API URL (GitHub Enterprise). Tokens and API URLs come from the settings, per host:
``PARITY_TRACKER_TOKENS`` (read), ``PARITY_TRACKER_WRITE_TOKENS`` (filing issues) and
``PARITY_TRACKER_API_URLS`` (tests point them at a local fake tracker).
"""

import re

from django.conf import settings

from parity.trackers.base import (
    Created,
    CreateRefused,
    Fetched,
    IssueAddress,
    IssueFacts,
    RateLimited,
    RepoAddress,
    Tracker,
    TrackerError,
    TrackerUnavailable,
)
from parity.trackers.github import GitHub
from parity.trackers.gitlab import GitLab

ADAPTERS: dict[str, type[Tracker]] = {"github": GitHub, "gitlab": GitLab}

_GITLAB = re.compile(
    r"^https?://([^/\s]+)/((?:[\w.-]+/)+[\w.-]+)/-/(issues|merge_requests)/(\d+)(?:[/?#]|$)", re.I
)
_GITHUB = re.compile(
    r"^https?://(?:www\.)?([^/\s]+)/([\w.-]+)/([\w.-]+)/(issues|pull)/(\d+)(?:[/?#]|$)", re.I
)
_GITLAB_TEMPLATE = re.compile(r"^https?://([^/\s]+)/((?:[\w.-]+/)+[\w.-]+)/-/issues/\{number\}")
_GITHUB_TEMPLATE = re.compile(
    r"^https?://(?:www\.)?([^/\s]+)/([\w.-]+)/([\w.-]+)/issues/\{number\}"
)


def _github_host(host: str) -> bool:
    return host == "github.com" or host in settings.PARITY_TRACKER_API_URLS


def issue_address(url: str) -> IssueAddress | None:
    """Where the issue at ``url`` lives, or None for a tracker parity has no adapter for."""
    url = url.strip()
    match = _GITLAB.match(url)
    if match:
        host, repo, what, number = match.groups()
        kind = "issue" if what.lower() == "issues" else "merge_request"
        return IssueAddress("gitlab", host.lower(), repo, int(number), kind)
    match = _GITHUB.match(url)
    if match and _github_host(match[1].lower()):
        host, owner, repo, what, number = match.groups()
        kind = "issue" if what.lower() == "issues" else "pull"
        return IssueAddress("github", host.lower(), f"{owner}/{repo}".lower(), int(number), kind)
    return None


def repo_address(issue_url_template: str) -> RepoAddress | None:
    """The repository a project files issues in: that of its issue URL template
    (``https://github.com/pytorch/xla/issues/{number}``)."""
    match = _GITLAB_TEMPLATE.match(issue_url_template.strip())
    if match:
        return RepoAddress("gitlab", match[1].lower(), match[2])
    match = _GITHUB_TEMPLATE.match(issue_url_template.strip())
    if match and _github_host(match[1].lower()):
        return RepoAddress("github", match[1].lower(), f"{match[2]}/{match[3]}")
    return None


def api_url(tracker: str, host: str) -> str:
    configured = settings.PARITY_TRACKER_API_URLS.get(host)
    if configured:
        return configured
    if tracker == "github":
        return "https://api.github.com" if host == "github.com" else f"https://{host}/api/v3"
    return f"https://{host}/api/v4"


def tracker_for(tracker: str, host: str, *, write: bool = False) -> Tracker:
    """The adapter for ``host``, with its read token (or its write token with ``write``; empty
    when the settings give none)."""
    tokens = settings.PARITY_TRACKER_WRITE_TOKENS if write else settings.PARITY_TRACKER_TOKENS
    return ADAPTERS[tracker](
        host=host,
        api_url=api_url(tracker, host),
        token=tokens.get(host, ""),
        timeout=settings.PARITY_TRACKER_TIMEOUT_SECONDS,
        reserve=settings.PARITY_TRACKER_RATE_RESERVE,
    )


__all__ = [
    "ADAPTERS",
    "CreateRefused",
    "Created",
    "Fetched",
    "IssueAddress",
    "IssueFacts",
    "RateLimited",
    "RepoAddress",
    "Tracker",
    "TrackerError",
    "TrackerUnavailable",
    "api_url",
    "issue_address",
    "repo_address",
    "tracker_for",
]
