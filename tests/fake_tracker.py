"""A fake issue tracker for tests: a threaded ``http.server`` on 127.0.0.1 speaking the subset
of GitHub's and GitLab's REST APIs that ``parity.trackers`` uses, so no test touches the
internet.

- GitHub under ``/github``: ``GET /repos/{owner}/{repo}/issues/{n}`` (issues and pull requests)
  and ``POST /repos/{owner}/{repo}/issues``; ``Authorization: Bearer <token>``.
- GitLab under ``/gitlab/api/v4``: ``GET /projects/{path}/issues?iids[]=…`` and
  ``…/merge_requests?iids[]=…``, paginated (``page``/``per_page``, at most ``page_size`` a page,
  with ``Link: <…>; rel="next"`` and ``X-Next-Page``), and ``POST /projects/{path}/issues``;
  ``PRIVATE-TOKEN: <token>``.

Like the real ones it sends an ``ETag`` (a hash of the body) and answers ``If-None-Match`` with
a 304 that costs no quota, counts a quota down in ``X-RateLimit-*`` / ``RateLimit-*`` headers
and answers 403 (GitHub) or 429 (GitLab) once it is spent. ``script()`` queues answers for the
next requests (a 403 with ``Retry-After``, a 502…), to play faults in order; clearing
``answering`` holds requests until it is set again. Every request is logged in ``requests``.
"""

import hashlib
import json
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: dict | None
    status: int = 0


@dataclass
class Scripted:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: object = None


def github_issue(number: int, title: str, *, state: str = "open", **extra) -> dict:
    """An issue as GitHub's REST API shows it (the fields parity reads, and a few more)."""
    closed_at = extra.pop("closed_at", "2026-03-02T10:00:00Z" if state == "closed" else None)
    return {
        "number": number,
        "title": title,
        "state": state,
        "closed_at": closed_at,
        "labels": [{"name": name} for name in extra.pop("labels", [])],
        "assignee": {"login": extra["assignee"]} if extra.get("assignee") else None,
        "html_url": extra.pop("html_url", ""),
        **{k: v for k, v in extra.items() if k != "assignee"},
    }


def gitlab_issue(iid: int, title: str, *, state: str = "opened", **extra) -> dict:
    closed = state in ("closed", "merged")
    return {
        "iid": iid,
        "title": title,
        "state": state,
        "closed_at": extra.pop("closed_at", "2026-03-02T10:00:00.000Z" if closed else None),
        "labels": extra.pop("labels", []),
        "assignee": {"username": extra.pop("assignee")} if extra.get("assignee") else None,
        **extra,
    }


class FakeTracker:
    def __init__(self, *, token: str = "read-token", write_token: str = "write-token") -> None:
        self.token = token
        self.write_token = write_token
        self.github: dict[tuple[str, int], dict] = {}  # (owner/repo, number) -> issue
        self.gitlab: dict[tuple[str, str, int], dict] = {}  # (path, "issues"|"merge_requests", iid)
        self.page_size = 100
        self.quota = 5000
        self.reset_at = int(time.time()) + 3600
        self.requests: list[Seen] = []
        self._script: list[Scripted] = []
        self._lock = threading.Lock()
        # Cleared, requests wait (30 s at most) before they are answered: a client caught in the
        # middle of its requests. ``arrived`` counts requests received, answered or waiting.
        self.answering = threading.Event()
        self.answering.set()
        self.arrived = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    # --- Lifetime -------------------------------------------------------------------------

    def __enter__(self) -> "FakeTracker":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def github_api(self) -> str:
        return f"{self.url}/github"

    @property
    def gitlab_api(self) -> str:
        return f"{self.url}/gitlab/api/v4"

    # --- What tests arrange ---------------------------------------------------------------

    def add_github(self, repo: str, issue: dict) -> None:
        if not issue.get("html_url"):
            issue["html_url"] = f"https://github.com/{repo}/issues/{issue['number']}"
        self.github[repo, issue["number"]] = issue

    def add_gitlab(self, path: str, issue: dict, *, resource: str = "issues") -> None:
        self.gitlab[path, resource, issue["iid"]] = issue

    def script(self, *answers: Scripted) -> None:
        """Answer the next requests with these, in order, whatever they ask."""
        with self._lock:
            self._script.extend(answers)

    def seen(self, method: str | None = None) -> list[Seen]:
        return [r for r in self.requests if method is None or r.method == method]

    # --- Answers --------------------------------------------------------------------------

    def answer(self, seen: Seen) -> tuple[int, dict[str, str], object]:
        with self._lock:
            scripted = self._script.pop(0) if self._script else None
        if scripted is not None:
            return scripted.status, scripted.headers, scripted.body
        path = urllib.parse.urlsplit(seen.path).path
        gitlab = path.startswith("/gitlab/api/v4/")
        if not self._authorized(seen, gitlab=gitlab, write=seen.method == "POST"):
            return 401, {}, {"message": "Bad credentials"}
        if self.quota <= 0:
            status = 429 if gitlab else 403
            return status, self._quota_headers(gitlab), {"message": "API rate limit exceeded"}
        if gitlab:
            status, headers, body = self._gitlab(seen)
        else:
            status, headers, body = self._github(seen)
        return status, headers, body

    def _authorized(self, seen: Seen, *, gitlab: bool, write: bool) -> bool:
        sent = (
            seen.headers.get("private-token", "")
            if gitlab
            else seen.headers.get("authorization", "").removeprefix("Bearer ")
        )
        return sent in ((self.write_token,) if write else (self.token, self.write_token))

    def _quota_headers(self, gitlab: bool) -> dict[str, str]:
        prefix = "RateLimit" if gitlab else "X-RateLimit"
        return {
            f"{prefix}-Remaining": str(max(self.quota, 0)),
            f"{prefix}-Reset": str(self.reset_at),
        }

    def _conditional(self, seen: Seen, gitlab: bool, status: int, body, extra=None):
        """200 with an ETag, or 304 when If-None-Match names it (no quota spent then)."""
        etag = 'W/"' + hashlib.sha1(json.dumps(body, sort_keys=True).encode()).hexdigest() + '"'
        if seen.headers.get("if-none-match") == etag:
            return 304, {"ETag": etag, **self._quota_headers(gitlab)}, None
        self.quota -= 1
        return status, {"ETag": etag, **(extra or {}), **self._quota_headers(gitlab)}, body

    def _github(self, seen: Seen):
        parts = urllib.parse.urlsplit(seen.path).path.split("/")
        # /github/repos/{owner}/{repo}/issues[/{n}]
        if len(parts) < 6 or parts[1:3] != ["github", "repos"] or parts[5] != "issues":
            return 404, {}, {"message": "Not Found"}
        repo = f"{parts[3]}/{parts[4]}".lower()
        if seen.method == "POST":
            return self._github_create(repo, seen.body or {})
        issue = self.github.get((repo, int(parts[6]))) if len(parts) > 6 else None
        if issue is None:
            self.quota -= 1
            return 404, self._quota_headers(False), {"message": "Not Found"}
        return self._conditional(seen, False, 200, issue)

    def _github_create(self, repo: str, payload: dict):
        if not payload.get("title"):
            return 422, {}, {"message": "Validation Failed"}
        number = max([n for r, n in self.github if r == repo] + [0]) + 1
        issue = github_issue(number, payload["title"], labels=payload.get("labels", []))
        issue["body"] = payload.get("body", "")
        self.add_github(repo, issue)
        self.quota -= 1
        return 201, self._quota_headers(False), issue

    def _gitlab(self, seen: Seen):
        split = urllib.parse.urlsplit(seen.path)
        rest = split.path.removeprefix("/gitlab/api/v4/projects/")
        encoded, _, resource = rest.partition("/")
        project = urllib.parse.unquote(encoded)
        if resource not in ("issues", "merge_requests"):
            return 404, {}, {"message": "404 Not found"}
        if seen.method == "POST":
            return self._gitlab_create(project, seen.body or {})
        query = urllib.parse.parse_qs(split.query)
        iids = [int(i) for i in query.get("iids[]", [])]
        found = [
            self.gitlab[project, resource, i] for i in iids if (project, resource, i) in self.gitlab
        ]
        per_page = min(int(query.get("per_page", ["20"])[0]), self.page_size)
        page = int(query.get("page", ["1"])[0])
        chunk = found[(page - 1) * per_page : page * per_page]
        headers = {}
        if page * per_page < len(found):
            following = dict(query, page=[str(page + 1)])
            link = f"{self.url}{split.path}?{urllib.parse.urlencode(following, doseq=True)}"
            headers = {"Link": f'<{link}>; rel="next"', "X-Next-Page": str(page + 1)}
        return self._conditional(seen, True, 200, chunk, headers)

    def _gitlab_create(self, project: str, payload: dict):
        iid = max([i for p, r, i in self.gitlab if p == project and r == "issues"] + [0]) + 1
        labels = [name for name in payload.get("labels", "").split(",") if name]
        issue = gitlab_issue(iid, payload.get("title", ""), labels=labels)
        issue["description"] = payload.get("description", "")
        issue["web_url"] = f"https://gitlab.example.com/{project}/-/issues/{iid}"
        self.add_gitlab(project, issue)
        self.quota -= 1
        return 201, self._quota_headers(True), issue


def _handler(fake: FakeTracker) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            seen = Seen(
                method=self.command,
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=json.loads(raw) if raw else None,
            )
            with fake._lock:
                fake.arrived += 1
            fake.answering.wait(timeout=30)
            status, headers, body = fake.answer(seen)
            seen.status = status
            with fake._lock:
                fake.requests.append(seen)
            data = b"" if body is None else json.dumps(body).encode()
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            if status != 304:
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if status != 304:
                self.wfile.write(data)

        do_GET = do_POST = _serve

        def log_message(self, format, *args) -> None:  # quiet: tests read ``requests``
            pass

    return Handler
