"""GitHub's three App endpoints parity uses, for tests: a threaded ``http.server`` on 127.0.0.1
that checks the App's JWT with the public key of the test's key pair, hands out installation
tokens, and records the check runs posted with one of them.

``script(502, 201)`` queues the statuses of the next check-run posts (then 201s); ``requests``
lists every (method, path) asked, to count token exchanges.
"""

import datetime
import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

INSTALLATION = 42


def key_pair() -> tuple[str, str]:
    """A fresh RSA key pair: (private PEM, public PEM)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return private, public.decode()


@dataclass
class FakeGitHubApp:
    app_id: str
    public_key: str
    repos: set[str]  # where the App is installed
    check_runs: list[tuple[str, dict]] = field(default_factory=list)  # (repo, payload)
    requests: list[tuple[str, str]] = field(default_factory=list)
    scripted: list[int] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # why each 401 was answered
    token_seconds: int = 3600  # how long an installation token lives (GitHub's: an hour)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens: set[str] = set()
        self._numbers = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.api_url = f"http://127.0.0.1:{self._server.server_port}"

    def __enter__(self) -> "FakeGitHubApp":
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def script(self, *statuses: int) -> None:
        with self._lock:
            self.scripted.extend(statuses)

    def wait_for(self, count: int, seconds: float) -> list[tuple[str, dict]]:
        """The first ``count`` check runs, waiting up to ``seconds`` for them."""
        deadline = time.monotonic() + seconds
        while len(self.check_runs) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.check_runs[:count]

    def token_requests(self) -> int:
        return sum(1 for _, path in self.requests if path.endswith("/access_tokens"))

    def _app_verified(self, bearer: str) -> bool:
        try:
            claims = jwt.decode(bearer, self.public_key, algorithms=["RS256"])
        except jwt.PyJWTError as exc:
            self.refused.append(f"JWT: {exc}")
            return False
        if claims.get("iss") != self.app_id or claims["exp"] - claims["iat"] > 600:
            self.refused.append(f"JWT claims: {claims}")
            return False
        return True

    def answer(self, method: str, path: str, bearer: str, body: dict) -> tuple[int, dict]:
        with self._lock:
            self.requests.append((method, path))
        parts = path.strip("/").split("/")
        if method == "GET" and parts[0] == "repos" and parts[3:] == ["installation"]:
            if not self._app_verified(bearer):
                return 401, {"message": "A JSON web token could not be decoded"}
            if f"{parts[1]}/{parts[2]}" not in self.repos:
                return 404, {"message": "Not Found"}
            return 200, {"id": INSTALLATION, "app_id": int(self.app_id)}
        if method == "POST" and path == f"/app/installations/{INSTALLATION}/access_tokens":
            if not self._app_verified(bearer):
                return 401, {"message": "A JSON web token could not be decoded"}
            token = f"ghs_test{next(self._numbers)}"
            self._tokens.add(token)
            lifetime = datetime.timedelta(seconds=self.token_seconds)
            expires = datetime.datetime.now(datetime.UTC) + lifetime
            return 201, {"token": token, "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%SZ")}
        if method == "POST" and parts[0] == "repos" and parts[3:] == ["check-runs"]:
            if bearer not in self._tokens:
                self.refused.append(f"check run with {bearer[:12]}...")
                return 401, {"message": "Bad credentials"}
            with self._lock:
                status = self.scripted.pop(0) if self.scripted else 201
                if status != 201:
                    return status, {"message": "scripted"}
                self.check_runs.append((f"{parts[1]}/{parts[2]}", body))
                number = len(self.check_runs)
            return 201, {"id": number, "html_url": f"https://github.com/{parts[1]}/runs/{number}"}
        return 404, {"message": "Not Found"}


def _handler(fake: FakeGitHubApp) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            bearer = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            status, body = fake.answer(
                self.command, self.path, bearer, json.loads(raw) if raw else {}
            )
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _serve

        def log_message(self, *args) -> None:  # quiet: tests read ``requests``
            pass

    return Handler
