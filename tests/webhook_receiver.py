"""A webhook receiver for tests: a threaded ``http.server`` on 127.0.0.1 that checks each
request's signature as docs/webhooks.md tells receivers to, and records what came.

``script(500, 200)`` queues the statuses of the next requests (then 200s); a request whose
signature fails is answered 401 and recorded with ``verified=False``. ``TricklingReceiver``,
``RedirectingReceiver`` and ``OkReceiver`` are raw listeners on a loopback address for the
egress and deadline tests (``tests/parity/outbound``).
"""

import json
import socket
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


class _Listener:
    """A raw TCP listener on a loopback address, one thread per connection, ``serve`` each."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self._socket = socket.create_server((host, 0))
        self.host, self.port = host, self._socket.getsockname()[1]
        self.connections = 0
        self.requests: list[bytes] = []  # each request's first bytes (its line and headers)
        self._closing = threading.Event()

    def url(self, path: str = "/hook") -> str:
        return f"http://{self.host}:{self.port}{path}"

    def serve(self, connection: socket.socket) -> None:
        raise NotImplementedError

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            try:
                connection.settimeout(5)
                self.requests.append(connection.recv(65536))  # small: headers, a signed body
                self.serve(connection)
            except OSError:
                pass  # the client gave up: what a bounded attempt does

    def __enter__(self):
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._closing.set()
        self._socket.close()


class TricklingReceiver(_Listener):
    """Answers ``200 OK`` one byte every ``every`` seconds: a receiver that holds a client
    whose timeout bounds each read rather than the whole attempt."""

    def __init__(self, host: str = "127.0.0.1", every: float = 2.0) -> None:
        super().__init__(host)
        self.every = every
        self.bytes_sent = 0

    def serve(self, connection: socket.socket) -> None:
        answer = b"HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n" + b"x" * 20
        for byte in answer:
            if self._closing.is_set():
                return
            connection.sendall(bytes([byte]))
            self.bytes_sent += 1
            time.sleep(self.every)


class RedirectingReceiver(_Listener):
    """Answers every request with a redirect to ``location``."""

    def __init__(self, location: str, host: str = "127.0.0.1", status: int = 302) -> None:
        super().__init__(host)
        self.location, self.status = location, status

    def serve(self, connection: socket.socket) -> None:
        connection.sendall(
            f"HTTP/1.1 {self.status} Found\r\nLocation: {self.location}\r\n"
            "Content-Length: 0\r\nConnection: close\r\n\r\n".encode()
        )


class OkReceiver(_Listener):
    """Answers every request ``200`` with ``body``, counting connections."""

    def __init__(self, host: str = "127.0.0.1", body: bytes = b"{}") -> None:
        super().__init__(host)
        self.body = body

    def serve(self, connection: socket.socket) -> None:
        connection.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
            + f"Content-Length: {len(self.body)}\r\n\r\n".encode()
            + self.body
        )
