"""A TCP proxy on 127.0.0.1 in front of the live server that spoils its first connection, one
way or another, then forwards every later one untouched: what a CI runner sees when a load
balancer restarts or a network path drops.

Faults of the first connection:

- ``drop``: read the request's head, then close: the server never sees it.
- ``lose_answer``: forward the whole request, let the server answer, and close without passing
  the answer on: the server stored the upload, the client does not know.
- ``503``: read the whole request and answer ``503 Service Unavailable``.
"""

import contextlib
import socket
import threading

FAULTS = ("drop", "lose_answer", "503")
TIMEOUT_SECONDS = 60
_CHUNK = 65536


class FlakyProxy:
    def __init__(self, *, upstream_port: int, fault: str) -> None:
        assert fault in FAULTS, fault
        self.upstream = ("127.0.0.1", upstream_port)
        self.fault = fault
        self.connections = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._threads: list[threading.Thread] = []
        self._closed = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def __enter__(self) -> "FlakyProxy":
        self._spawn(self._accept_loop)
        return self

    def __exit__(self, *exc_info) -> None:
        self._closed.set()
        with contextlib.suppress(OSError):  # wakes the accept() that close() alone would not
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        for thread in self._threads:
            thread.join(timeout=TIMEOUT_SECONDS)

    def _spawn(self, target, *args) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _accept_loop(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:  # the listener was closed
                return
            client.settimeout(TIMEOUT_SECONDS)
            self.connections += 1
            handler = self._spoil if self.connections == 1 else self._forward
            self._spawn(handler, client)

    def _spoil(self, client: socket.socket) -> None:
        with client:
            head, rest = _read_head(client)
            if self.fault == "drop":
                return
            body = rest + _read_exactly(client, _content_length(head) - len(rest))
            if self.fault == "503":
                client.sendall(
                    b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                    b"Connection: close\r\n\r\n"
                )
                return
            with socket.create_connection(self.upstream, timeout=TIMEOUT_SECONDS) as upstream:
                upstream.sendall(head + body)
                while upstream.recv(_CHUNK):  # the server's answer, read and thrown away
                    pass

    def _forward(self, client: socket.socket) -> None:
        upstream = socket.create_connection(self.upstream, timeout=TIMEOUT_SECONDS)
        with client, upstream:
            answer = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
            answer.start()
            _pump(client, upstream)
            answer.join(TIMEOUT_SECONDS)


def _pump(source: socket.socket, sink: socket.socket) -> None:
    """Copy until ``source`` ends, then end ``sink``'s side of the conversation."""
    try:
        while chunk := source.recv(_CHUNK):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


def _read_head(sock: socket.socket) -> tuple[bytes, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(_CHUNK)
        if not chunk:
            break
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head + b"\r\n\r\n", rest


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(min(_CHUNK, size - len(data)))
        if not chunk:
            break
        data += chunk
    return data


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    return 0
