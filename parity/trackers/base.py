"""The one small interface every issue tracker's adapter implements, and what adapters share:
where an issue lives (``IssueAddress``, parsed from its URL), what a tracker says about it
(``IssueFacts``), the HTTP exchange (through ``parity.outbound``, under the egress policy; no
redirects to another host, so a token never leaves its host) and how an answer says the quota
is spent (``RateLimited``).

An adapter reads issues in batches with conditional requests (``If-None-Match``: a 304 costs no
quota), creates one, and builds the tracker's own prefilled "new issue" URL. It never touches
the database: ``parity.services.issue_sync`` and ``parity.services.issue_filing`` do.
"""

import datetime
import email.utils
import json
import logging
import urllib.parse
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from parity import outbound

logger = logging.getLogger(__name__)


class TrackerError(Exception):
    """A tracker could not answer."""


class TrackerUnavailable(TrackerError):
    """The host is down or erring (5xx, a timeout, a refused connection): stop asking it until
    the next sync; what is stored stays as it was."""


class RateLimited(TrackerError):
    """The host's quota is spent or nearly so: ask again at ``resume_at``, not before."""

    def __init__(self, message: str, *, resume_at: datetime.datetime) -> None:
        super().__init__(message)
        self.resume_at = resume_at


class CreateRefused(TrackerError):
    """The tracker refused to create the issue (no permission, a bad label, a validation)."""


@dataclass(frozen=True, order=True)
class IssueAddress:
    """An issue (or pull/merge request) at its tracker."""

    tracker: str  # "github" or "gitlab"
    host: str  # github.com, gitlab.example.com (with its port, if any)
    repo: str  # owner/name on GitHub; the project's full path on GitLab
    number: int
    kind: str = "issue"  # "issue", or "pull" (GitHub) / "merge_request" (GitLab)


@dataclass(frozen=True)
class RepoAddress:
    """A repository issues are filed in (from a project's issue URL template)."""

    tracker: str
    host: str
    repo: str


@dataclass(frozen=True)
class IssueFacts:
    """What the tracker says about an issue, as stored on ``TrackingIssue``."""

    state: str  # "open" or "closed" (parity.models.IssueState)
    title: str
    labels: tuple[str, ...] = ()
    assignee: str = ""
    closed_at: datetime.datetime | None = None


@dataclass(frozen=True)
class Fetched:
    """One issue's answer: new facts, unchanged (a 304), or an error about this issue alone
    (not found, no access), which leaves its stored facts as they were."""

    address: IssueAddress
    facts: IssueFacts | None = None
    etag: str = ""
    unchanged: bool = False
    error: str = ""


@dataclass(frozen=True)
class Created:
    address: IssueAddress
    url: str  # the issue's page
    facts: IssueFacts


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes

    def json(self):
        return json.loads(self.body or b"null")

    def header(self, name: str) -> str:
        return self.headers.get(name.lower(), "")


@dataclass
class Quota:
    """What the last answers said about the host's rate limit. The sync stops a host once the
    remaining quota falls to ``reserve`` (kept for people using the same token)."""

    reserve: int = 0
    remaining: int | None = None
    reset_at: datetime.datetime | None = None
    requests: int = 0
    conditional_hits: int = 0  # 304s: free on GitHub


# A batch of 100 issues' GraphQL answer is a few hundred kilobytes.
ANSWER_MAX_BYTES = 16 * 1024 * 1024
RETRY_AFTER_DEFAULT = 60  # seconds, when a limit answer says nothing more (GitHub's advice)


def parse_http_date(value: str) -> datetime.datetime | None:
    try:
        return email.utils.parsedate_to_datetime(value).astimezone(datetime.UTC)
    except (TypeError, ValueError, IndexError):
        return None


def parse_time(value: str | None) -> datetime.datetime | None:
    """An ISO 8601 time from a tracker ("2026-03-02T10:00:00Z", GitLab's milliseconds too)."""
    if not value:
        return None
    try:
        parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)


class Tracker(ABC):
    """A tracker on one host, with the token the settings give for it (may be empty: the sync
    does not run a host without one, filing falls back to the new-issue URL)."""

    kind: str  # "github", "gitlab"
    name: str  # as readers know it: "GitHub"
    # Quota headers: GitHub's X-RateLimit-*, GitLab's RateLimit-*.
    remaining_headers = ("x-ratelimit-remaining", "ratelimit-remaining")
    reset_headers = ("x-ratelimit-reset", "ratelimit-reset")

    def __init__(
        self,
        *,
        host: str,
        api_url: str,
        token: str = "",
        timeout: float = 10.0,
        reserve: int = 0,
        now=None,
    ) -> None:
        self.host = host
        self.api_url = api_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.quota = Quota(reserve=reserve)
        self._now = now or (lambda: datetime.datetime.now(datetime.UTC))

    # --- What each adapter implements -----------------------------------------------------------

    @abstractmethod
    def fetch(self, wanted: Sequence[tuple[IssueAddress, str]]) -> Iterator[Fetched]:
        """Each (address, stored ETag) wanted, read in batches; yields as answers come.
        Raises ``RateLimited`` (after yielding what it read) when the quota is spent or below
        the reserve, ``TrackerUnavailable`` when the host errs."""

    @abstractmethod
    def create(self, repo: RepoAddress, *, title: str, body: str, labels: Sequence[str]) -> Created:
        """File a new issue; raises ``CreateRefused``, ``RateLimited`` or
        ``TrackerUnavailable``."""

    @abstractmethod
    def new_issue_url(
        self, repo: RepoAddress, *, title: str, body: str, labels: Sequence[str]
    ) -> str:
        """The tracker's own "new issue" page, prefilled through its URL parameters."""

    @abstractmethod
    def auth_headers(self) -> dict[str, str]: ...

    # --- Shared -------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path_or_url: str,
        *,
        etag: str = "",
        payload: dict | None = None,
    ) -> Answer:
        """One request to the host's API, following at most three redirects on the same host.
        Raises ``TrackerUnavailable`` for 5xx and network errors, ``RateLimited`` for a limit
        answer; any other status is the caller's to read."""
        url = path_or_url if "://" in path_or_url else f"{self.api_url}{path_or_url}"
        headers = {"User-Agent": "parity-tracker-sync", **self.auth_headers()}
        if etag:
            headers["If-None-Match"] = etag
        data = None
        if payload is not None:
            data = json.dumps(payload).encode()
            headers["Content-Type"] = "application/json"
        for _ in range(4):
            answer = self._exchange(method, url, headers, data)
            location = answer.header("location")
            if answer.status in (301, 302, 307, 308) and location:
                target = urllib.parse.urljoin(url, location)
                if urllib.parse.urlsplit(target).netloc != urllib.parse.urlsplit(url).netloc:
                    return answer  # another host: not followed with our token
                url = target
                continue
            break
        self._read_quota(answer)
        if answer.status >= 500:
            raise TrackerUnavailable(f"{self.host} answered {answer.status}")
        self._raise_if_limited(answer)
        return answer

    def _exchange(self, method: str, url: str, headers: dict, data: bytes | None) -> Answer:
        """One request, no redirect followed (``request`` follows those on the same host)."""
        self.quota.requests += 1
        try:
            answer = outbound.request(
                method,
                url,
                headers=headers,
                body=data,
                timeout=self.timeout,
                max_bytes=ANSWER_MAX_BYTES,
                purpose=f"tracker {self.kind}",
            )
        except outbound.OutboundError as exc:  # refused by the egress policy included
            raise TrackerUnavailable(f"{self.host}: {exc}") from exc
        return Answer(answer.status, answer.headers, answer.body)

    def _read_quota(self, answer: Answer) -> None:
        if answer.status == 304:
            self.quota.conditional_hits += 1
        remaining = next((answer.header(h) for h in self.remaining_headers if answer.header(h)), "")
        reset = next((answer.header(h) for h in self.reset_headers if answer.header(h)), "")
        if remaining.isdigit():
            self.quota.remaining = int(remaining)
        if reset.isdigit():
            self.quota.reset_at = datetime.datetime.fromtimestamp(int(reset), datetime.UTC)

    def _raise_if_limited(self, answer: Answer) -> None:
        """A 429, or a 403 that is a limit (Retry-After, no quota left, or saying so), raises
        ``RateLimited`` until when the answer says (GitHub's rules, which GitLab's fit)."""
        if answer.status not in (403, 429):
            return
        retry_after = answer.header("retry-after")
        says_limit = b"rate limit" in answer.body.lower()
        if not (answer.status == 429 or retry_after or self.quota.remaining == 0 or says_limit):
            return  # a plain 403: no access to this issue
        now = self._now()
        retry_at = parse_http_date(retry_after) if retry_after else None
        if retry_after.isdigit():
            resume = now + datetime.timedelta(seconds=int(retry_after))
        elif retry_at is not None:
            resume = retry_at
        elif self.quota.remaining == 0 and self.quota.reset_at:
            resume = max(self.quota.reset_at, now)
        else:
            resume = now + datetime.timedelta(seconds=RETRY_AFTER_DEFAULT)
        raise RateLimited(
            f"{self.host} rate limit ({answer.status}): resume at {resume:%Y-%m-%d %H:%M:%S}Z",
            resume_at=resume,
        )

    def created(
        self, answer: Answer, repo: RepoAddress, *, number: str, url: str, facts
    ) -> Created:
        """The new issue from a creation's answer (its ``number`` and ``url`` fields, its
        ``facts(data)``), or ``CreateRefused`` with the tracker's message."""
        if answer.status != 201:
            message = (answer.json() or {}).get("message", "") if answer.body else ""
            refused = f"{self.name} refused the issue ({answer.status}): {message}"
            raise CreateRefused(refused.strip())
        data = answer.json()
        address = IssueAddress(self.kind, repo.host, repo.repo, int(data[number]))
        return Created(address=address, url=data[url], facts=facts(data))

    def check_reserve(self) -> None:
        """After an answer was used: stop once the quota left is at the reserve."""
        remaining = self.quota.remaining
        if remaining is not None and remaining <= self.quota.reserve:
            resume = self.quota.reset_at or self._now() + datetime.timedelta(
                seconds=RETRY_AFTER_DEFAULT
            )
            raise RateLimited(
                f"{self.host} has {remaining} requests left (reserve {self.quota.reserve}): "
                f"resume at {resume:%Y-%m-%d %H:%M:%S}Z",
                resume_at=resume,
            )


def issue_error(answer: Answer) -> str:
    """What a 4xx about one issue says, for ``TrackingIssue.sync_error``."""
    words = {401: "the token was refused", 403: "no access", 404: "not found", 410: "deleted"}
    detail = words.get(answer.status, "refused")
    return f"{detail} ({answer.status})"
