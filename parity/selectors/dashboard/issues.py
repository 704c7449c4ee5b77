"""How pages name an issue: ``pytorch/xla#4298`` for a GitHub URL, else the key or the URL."""

import re
from dataclasses import dataclass

_GITHUB = re.compile(r"^https?://github\.com/([^/\s]+/[^/\s]+)/(?:issues|pull)/(\d+)")


@dataclass(frozen=True)
class IssueLink:
    label: str
    url: str  # empty for a bare key (``b/123456``) the project has no URL for


def issue_link(url_or_key: str) -> IssueLink:
    """From what ``parity.selectors.issue_urls`` gives: an issue's URL, or its key."""
    match = _GITHUB.match(url_or_key)
    if match:
        return IssueLink(label=f"{match[1]}#{match[2]}", url=url_or_key)
    if url_or_key.startswith(("http://", "https://")):
        short = url_or_key.split("://", 1)[1]
        return IssueLink(label=short if len(short) <= 40 else short[:39] + "…", url=url_or_key)
    return IssueLink(label=url_or_key, url="")


def issue_links(urls: list[str]) -> list[IssueLink]:
    return [issue_link(url) for url in urls]
