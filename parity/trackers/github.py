"""GitHub's REST API: an issue or a pull request by number (``GET /repos/{o}/{r}/issues/{n}``
answers both; a merged pull request is closed), one conditional request each (a 304 is free of
quota), and ``POST /repos/{o}/{r}/issues`` to file one. GitHub Enterprise hosts work the same
under their own API URL."""

import urllib.parse
from collections.abc import Iterator, Sequence

from parity.trackers.base import (
    Created,
    Fetched,
    IssueAddress,
    IssueFacts,
    RepoAddress,
    Tracker,
    issue_error,
    parse_time,
)


def github_facts(data: dict) -> IssueFacts:
    assignee = (data.get("assignee") or {}).get("login") or ""
    return IssueFacts(
        state="closed" if data.get("state") == "closed" else "open",
        title=data.get("title") or "",
        labels=tuple(label["name"] for label in data.get("labels") or [] if label.get("name")),
        assignee=assignee,
        closed_at=parse_time(data.get("closed_at")),
    )


class GitHub(Tracker):
    kind = "github"
    name = "GitHub"

    def auth_headers(self) -> dict[str, str]:
        headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def fetch(self, wanted: Sequence[tuple[IssueAddress, str]]) -> Iterator[Fetched]:
        # GitHub's REST API reads one issue per request; conditional requests keep the batch
        # cheap (a 304 does not count against the quota).
        for address, etag in wanted:
            owner_repo = urllib.parse.quote(address.repo, safe="/")
            answer = self.request("GET", f"/repos/{owner_repo}/issues/{address.number}", etag=etag)
            if answer.status == 304:
                yield Fetched(address, etag=etag, unchanged=True)
            elif answer.status == 200:
                yield Fetched(address, github_facts(answer.json()), etag=answer.header("etag"))
            else:
                yield Fetched(address, error=issue_error(answer))
            self.check_reserve()

    def create(self, repo: RepoAddress, *, title: str, body: str, labels: Sequence[str]) -> Created:
        payload = {"title": title, "body": body, "labels": list(labels)}
        answer = self.request("POST", f"/repos/{repo.repo}/issues", payload=payload)
        return self.created(answer, repo, number="number", url="html_url", facts=github_facts)

    def new_issue_url(
        self, repo: RepoAddress, *, title: str, body: str, labels: Sequence[str]
    ) -> str:
        query = {"title": title, "body": body}
        if labels:
            query["labels"] = ",".join(labels)
        return f"https://{repo.host}/{repo.repo}/issues/new?{urllib.parse.urlencode(query)}"
