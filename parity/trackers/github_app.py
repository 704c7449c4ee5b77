"""Parity as a GitHub App: the App's JWT (RS256, signed with its private key), an installation
token for a repository (cached in this process until shortly before it expires), and
``POST /repos/{o}/{r}/check-runs``. Requests go through the GitHub adapter's exchange, so 5xx
and network errors raise ``TrackerUnavailable`` and a spent quota ``RateLimited``. No database
here: ``parity.services.check_runs`` decides what to post."""

import datetime
import threading
import time
from pathlib import Path

import jwt

from parity.trackers.base import TrackerError, issue_error
from parity.trackers.github import GitHub

# GitHub refuses a JWT living longer than ten minutes or issued in its future: backdate it for
# clock drift and keep it short.
JWT_BACKDATE_SECONDS = 60
JWT_LIFETIME_SECONDS = 9 * 60
# An installation token lives an hour; one this close to its expiry is renewed, so a request
# never carries a token that expires on the way.
TOKEN_RENEW_SECONDS = 5 * 60


class CheckRunRefused(TrackerError):
    """GitHub refused (the App not installed on the repository, no ``checks: write``, a bad
    key or payload): retrying will not help."""


def private_key(setting: str) -> str:
    """The App's key from its setting: the PEM text itself, or the path of a PEM file."""
    text = setting.strip()
    if text.startswith("-----BEGIN"):
        return text
    try:
        return Path(text).read_text(encoding="utf-8")
    except OSError as exc:
        raise CheckRunRefused(f"PARITY_GITHUB_APP_PRIVATE_KEY: cannot read {text}: {exc}") from exc


def app_jwt(*, app_id: str, key: str, now: float | None = None) -> str:
    issued = int(now if now is not None else time.time()) - JWT_BACKDATE_SECONDS
    claims = {"iat": issued, "exp": issued + JWT_LIFETIME_SECONDS, "iss": str(app_id)}
    try:
        return jwt.encode(claims, key, algorithm="RS256")
    except (ValueError, TypeError, jwt.PyJWTError) as exc:
        raise CheckRunRefused(f"the App's private key is no RSA key in PEM: {exc}") from exc


_tokens: dict[tuple[str, str], tuple[str, float]] = {}  # (api_url, repo) -> (token, expiry)
_tokens_lock = threading.Lock()


def tokens_forget() -> None:
    """Drop every cached installation token (tests; a rotated key)."""
    with _tokens_lock:
        _tokens.clear()


class GitHubApp:
    def __init__(self, *, host: str, api_url: str, app_id: str, key: str, timeout: float):
        self.host, self.api_url = host, api_url.rstrip("/")
        self.app_id, self.key, self.timeout = app_id, key, timeout

    def _client(self, token: str) -> GitHub:
        return GitHub(host=self.host, api_url=self.api_url, token=token, timeout=self.timeout)

    def installation_token(self, repo: str) -> str:
        """A token of the App's installation on ``repo``, from the cache while it has more
        than ``TOKEN_RENEW_SECONDS`` to live."""
        cached = _tokens.get((self.api_url, repo))
        if cached and cached[1] - time.time() > TOKEN_RENEW_SECONDS:
            return cached[0]
        as_app = self._client(app_jwt(app_id=self.app_id, key=self.key))
        answer = as_app.request("GET", f"/repos/{repo}/installation")
        if answer.status != 200:
            raise CheckRunRefused(f"the App is not installed on {repo}: {issue_error(answer)}")
        installation = answer.json()["id"]
        answer = as_app.request("POST", f"/app/installations/{installation}/access_tokens")
        if answer.status != 201:
            raise CheckRunRefused(f"no installation token for {repo}: {issue_error(answer)}")
        body = answer.json()
        expires = datetime.datetime.fromisoformat(body["expires_at"].replace("Z", "+00:00"))
        with _tokens_lock:
            _tokens[(self.api_url, repo)] = (body["token"], expires.timestamp())
        return body["token"]

    def check_run_create(self, repo: str, payload: dict) -> str:
        """Post a completed check run; its page's URL."""
        answer = self._client(self.installation_token(repo)).request(
            "POST", f"/repos/{repo}/check-runs", payload=payload
        )
        if answer.status == 401:  # the token was revoked early: the next attempt gets another
            with _tokens_lock:
                _tokens.pop((self.api_url, repo), None)
        if answer.status != 201:
            raise CheckRunRefused(f"{repo} refused the check run: {issue_error(answer)}")
        return answer.json().get("html_url", "")
