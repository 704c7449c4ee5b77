"""A webhook receiver for tests: a threaded ``http.server`` on 127.0.0.1 that checks each
request's signature as docs/webhooks.md tells receivers to, and records what came.

``script(500, 200)`` queues the statuses of the next requests (then 200s); a request whose
signature fails is answered 401 and recorded with ``verified=False``.
"""

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from parity.pure import webhooks as signing


@dataclass
class Received:
    headers: dict[str, str]
    raw: bytes
    status: int
    verified: bool
    why: str = ""

    @property
    def body(self) -> dict:
        return json.loads(self.raw)


class WebhookReceiver:
    def __init__(self, secret: str = "") -> None:
        self.secret = secret  # set once the endpoint's secret is known
        self.received: list[Received] = []
        self.scripted: list[int] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver._receive(self, raw)

            def log_message(self, *args) -> None:  # quiet test output
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_port}/hook"

    def script(self, *statuses: int) -> None:
        with self._lock:
            self.scripted.extend(statuses)

    def _receive(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        headers = dict(handler.headers.items())
        try:
            signing.verify(
                secret=self.secret,
                body=raw,
                timestamp=headers.get(signing.TIMESTAMP_HEADER, ""),
                signature_header=headers.get(signing.SIGNATURE_HEADER, ""),
                now=int(time.time()),
            )
            verified, why = True, ""
        except signing.Unverified as exc:
            verified, why = False, str(exc)
        with self._lock:
            status = (self.scripted.pop(0) if self.scripted else 200) if verified else 401
            self.received.append(Received(headers, raw, status, verified, why))
        handler.send_response(status)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    def wait_for(self, count: int, seconds: float) -> list[Received]:
        """The first ``count`` requests, waiting up to ``seconds`` for them."""
        deadline = time.monotonic() + seconds
        while len(self.received) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.received[:count]

    def __enter__(self) -> "WebhookReceiver":
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
