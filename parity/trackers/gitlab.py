"""GitLab's REST API (v4): a project's issues (and merge requests) by their numbers, up to a
hundred in one request (``GET /projects/:path/issues?iids[]=…``, pages followed), and
``POST /projects/:path/issues`` to file one.

A batch's answer carries one ETag; every issue read in it stores that ETag, and a batch whose
issues all hold the same one asks with ``If-None-Match`` (the same issues in the same order make
the same URL, so a 304 means none of them changed)."""

import urllib.parse
from collections import defaultdict
from collections.abc import Iterator, Sequence

from parity.trackers.base import (
    Answer,
    Created,
    Fetched,
    IssueAddress,
    IssueFacts,
    RepoAddress,
    Tracker,
    issue_error,
    parse_time,
)

BATCH = 100  # GitLab's largest page
_RESOURCES = {"issue": "issues", "merge_request": "merge_requests"}


def gitlab_facts(data: dict) -> IssueFacts:
    labels = [
        label if isinstance(label, str) else label.get("name", "")
        for label in data.get("labels") or []
    ]
    assignee = data.get("assignee") or next(iter(data.get("assignees") or []), None) or {}
    closed = data.get("state") in ("closed", "merged")
    return IssueFacts(
        state="closed" if closed else "open",
        title=data.get("title") or "",
        labels=tuple(name for name in labels if name),
        assignee=assignee.get("username", ""),
        closed_at=parse_time(data.get("closed_at") or data.get("merged_at")) if closed else None,
    )


def _project(repo: str) -> str:
    return urllib.parse.quote(repo, safe="")


class GitLab(Tracker):
    kind = "gitlab"
    name = "GitLab"

    def auth_headers(self) -> dict[str, str]:
        return {"PRIVATE-TOKEN": self.token} if self.token else {}

    def fetch(self, wanted: Sequence[tuple[IssueAddress, str]]) -> Iterator[Fetched]:
        groups: dict[tuple[str, str], list[tuple[IssueAddress, str]]] = defaultdict(list)
        for address, etag in sorted(wanted):
            groups[address.repo, address.kind].append((address, etag))
        for (repo, kind), items in sorted(groups.items()):
            for start in range(0, len(items), BATCH):
                yield from self._batch(repo, kind, items[start : start + BATCH])
                self.check_reserve()

    def _batch(
        self, repo: str, kind: str, items: list[tuple[IssueAddress, str]]
    ) -> Iterator[Fetched]:
        etags = {etag for _, etag in items}
        shared = etags.pop() if len(etags) == 1 else ""
        query = [("iids[]", str(a.number)) for a, _ in items] + [("per_page", str(BATCH))]
        url = f"/projects/{_project(repo)}/{_RESOURCES[kind]}?{urllib.parse.urlencode(query)}"
        answer = self.request("GET", url, etag=shared)
        if answer.status == 304:
            for address, _ in items:
                yield Fetched(address, etag=shared, unchanged=True)
            return
        if answer.status != 200:
            for address, _ in items:
                yield Fetched(address, error=issue_error(answer))
            return
        found, pages = self._pages(answer)
        # One page: its ETag stands for the batch. Several: no single ETag does.
        etag = answer.header("etag") if pages == 1 else ""
        for address, _ in items:
            data = found.get(address.number)
            if data is None:
                yield Fetched(address, error="not found (404)")
            else:
                yield Fetched(address, gitlab_facts(data), etag=etag)

    def _pages(self, answer: Answer) -> tuple[dict[int, dict], int]:
        found: dict[int, dict] = {}
        pages = 0
        while True:
            pages += 1
            for data in answer.json() or []:
                found[int(data["iid"])] = data
            following = _next_link(answer)
            same_host = (
                urllib.parse.urlsplit(following).netloc
                == urllib.parse.urlsplit(self.api_url).netloc
            )
            if not following or not same_host:  # never send the token to another host
                return found, pages
            answer = self.request("GET", following)
            if answer.status != 200:
                return found, pages

    def create(self, repo: RepoAddress, *, title: str, body: str, labels: Sequence[str]) -> Created:
        payload = {"title": title, "description": body, "labels": ",".join(labels)}
        answer = self.request("POST", f"/projects/{_project(repo.repo)}/issues", payload=payload)
        return self.created(answer, repo, number="iid", url="web_url", facts=gitlab_facts)

    def new_issue_url(
        self, repo: RepoAddress, *, title: str, body: str, labels: Sequence[str]
    ) -> str:
        # GitLab's form takes no labels through its URL; a quick action in the description does.
        if labels:
            quoted = " ".join(f'~"{label}"' for label in labels)
            body = f"{body}\n\n/label {quoted}"
        query = urllib.parse.urlencode({"issue[title]": title, "issue[description]": body})
        return f"https://{repo.host}/{repo.repo}/-/issues/new?{query}"


def _next_link(answer: Answer) -> str:
    """The next page's URL, from ``Link: <…>; rel="next"`` (GitLab sends ``X-Next-Page`` too,
    but the link is absolute)."""
    for part in answer.header("link").split(","):
        if 'rel="next"' in part:
            return part.split(";", 1)[0].strip().strip("<>")
    return ""
