"""The one HTTP stack parity's server and workers send requests with (the standard library's
``http.client``), under the egress policy and one deadline per request.

A request's host is resolved once; every address it resolves to is judged by the policy before
any connection, and the connection goes to a judged address: no second lookup a rebinding DNS
could answer differently. The request still names the host (``Host``, TLS SNI, and the
certificate is verified against the host name). A redirect is followed only when the caller
asks for it, each hop judged the same way; otherwise the 3xx is the caller's to read.

One deadline bounds the whole request (resolving, connecting, sending, every read, redirects):
each socket operation waits at most the time left, so a receiver trickling a byte at a time
cannot hold a worker longer than the caller's ``timeout``.
"""

import http.client
import io
import ipaddress
import json
import logging
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from parity.outbound.policy import (
    IPAddress,
    OutboundError,
    Policy,
    Refused,
    address_parse,
    refusal_text,
    url_refusal,
)

logger = logging.getLogger("parity.outbound")

USER_AGENT = "parity"
MAX_BYTES = 1024 * 1024  # an answer parity reads is small: JSON of an API, a key set
REDIRECT_STATUSES = (301, 302, 303, 307, 308)


class Unreachable(OutboundError):
    """No answer: the name does not resolve, the connection failed, or the answer broke off."""


class TimedOut(Unreachable):
    """No whole answer within the request's deadline."""


class TooLarge(OutboundError):
    """The answer (of ``status``) is longer than the caller reads."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes
    url: str  # the URL that answered (after the redirects followed)
    reason: str = ""  # the status line's phrase ("Internal Server Error")

    def header(self, name: str) -> str:
        return self.headers.get(name.lower(), "")

    def json(self):
        return json.loads(self.body or b"null")


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimedOut("no whole answer before the deadline")
    return left


class _DeadlineReader(io.RawIOBase):
    """Reads of a socket, each waiting at most until the deadline."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        self._sock.settimeout(_left(self._deadline))
        return self._sock.recv_into(buffer)


class _DeadlineSocket:
    """The socket ``http.client`` sends and reads with, bound by the deadline."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline

    def sendall(self, data) -> None:
        self._sock.settimeout(_left(self._deadline))  # bounds the whole sendall (Python 3.5+)
        self._sock.sendall(data)

    def makefile(self, mode: str = "rb", *args, **kwargs):
        return io.BufferedReader(_DeadlineReader(self._sock, self._deadline))

    def close(self) -> None:
        """Not yet: ``http.client`` closes the connection before the body is read (an answer
        that ends the connection); ``_Connection.release`` closes the socket after."""

    def __getattr__(self, name: str):
        return getattr(self._sock, name)


class _Connection(http.client.HTTPConnection):
    """A connection to ``address``, a judged address of ``host``, speaking to ``host``."""

    def __init__(self, host: str, port: int, *, address: IPAddress, deadline: float, tls: bool):
        super().__init__(host, port)
        self.default_port = 443 if tls else 80  # so Host names no default port
        self._address = address
        self._deadline = deadline
        self._tls = tls
        self._socket: socket.socket | None = None

    def connect(self) -> None:
        sock = socket.create_connection(
            (str(self._address), self.port), timeout=_left(self._deadline)
        )
        self._socket = sock
        if self._tls:
            sock = self._socket = _tls_context().wrap_socket(sock, server_hostname=self.host)
        self.sock = _DeadlineSocket(sock, self._deadline)

    def release(self) -> None:
        self.close()
        if self._socket is not None:
            self._socket.close()


_TLS: ssl.SSLContext | None = None


def _tls_context() -> ssl.SSLContext:
    global _TLS
    if _TLS is None:
        _TLS = ssl.create_default_context()
    return _TLS


def resolve(host: str, port: int, deadline: float) -> list[IPAddress]:
    """Every address ``host`` resolves to (itself, for an address): asked once per request,
    waiting for the resolver no longer than the deadline (``getaddrinfo`` has no timeout of its
    own, so it runs in a thread left behind if the deadline passes)."""
    literal = address_parse(host)
    if literal is not None:
        return [literal]
    answer: list = []

    def lookup() -> None:
        try:
            answer.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except (OSError, UnicodeError) as exc:
            answer.append(exc)

    thread = threading.Thread(target=lookup, name=f"resolve {host}", daemon=True)
    thread.start()
    thread.join(_left(deadline))
    if not answer:
        raise TimedOut(f"{host} did not resolve before the deadline")
    if isinstance(answer[0], Exception):
        raise Unreachable(f"{host} does not resolve ({answer[0]})") from answer[0]
    infos = answer[0]
    found: list[IPAddress] = []
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if address not in found:
            found.append(address)
    if not found:
        raise Unreachable(f"{host} resolves to no address")
    return found


def _destination(
    url: str, policy: Policy, deadline: float
) -> tuple[str, int, bool, list[IPAddress]]:
    """The host, port, TLS and judged addresses of ``url``; ``Refused`` when the policy says so."""
    why = url_refusal(url, policy)
    if why:
        raise Refused(refusal_text(url, why))
    parts = urlsplit(url.strip())
    tls = parts.scheme.lower() == "https"
    host = parts.hostname or ""
    port = parts.port or (443 if tls else 80)
    addresses = resolve(host, port, deadline)
    why = policy.host_refusal(host, addresses)
    if why:
        if address_parse(host) is None:
            why = f"{host} resolves to " + why.replace(" is ", ", which is ", 1)
        raise Refused(refusal_text(url, why))
    return host, port, tls, addresses


def _exchange(method, url, headers, body, *, policy, deadline, max_bytes) -> Response:
    host, port, tls, addresses = _destination(url, policy, deadline)
    parts = urlsplit(url.strip())
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    problem: Exception | None = None
    for address in addresses:
        connection = _Connection(host, port, address=address, deadline=deadline, tls=tls)
        try:
            connection.request(method, target, body=body, headers=headers)
            answer = connection.getresponse()
            data = answer.read(max_bytes + 1)
            if len(data) > max_bytes:
                raise TooLarge(f"{host} answered more than {max_bytes} bytes", status=answer.status)
            found = {name.lower(): value for name, value in answer.getheaders()}
            return Response(answer.status, found, data, url, reason=answer.reason)
        except TimeoutError as exc:
            raise TimedOut("no whole answer before the deadline") from exc
        except ConnectionError as exc:
            problem = exc  # refused or reset: another address of the host may answer
        except (OSError, http.client.HTTPException) as exc:
            raise Unreachable(f"{host}: {type(exc).__name__}: {exc}") from exc
        finally:
            connection.release()
    raise Unreachable(f"{host}: {type(problem).__name__}: {problem}") from problem


def request(
    method: str,
    url: str,
    *,
    timeout: float,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
    redirects: int = 0,
    max_bytes: int = MAX_BYTES,
    policy: Policy,
    purpose: str = "",
) -> Response:
    """Send one request and read its answer, within ``timeout`` seconds in all.

    ``redirects``: how many redirects to follow (each judged by the policy before it is
    connected to; ``Authorization`` is not carried to another host); 0 answers the 3xx itself.
    Raises ``Refused`` (the policy), ``TimedOut``, ``Unreachable`` or ``TooLarge``; any status
    is an answer. Logged: method, host, status or error, and time, never the path (a Slack
    URL's path is its secret) nor a header."""
    deadline = time.monotonic() + timeout
    headers = {"User-Agent": USER_AGENT, **(headers or {})}
    for hop in range(redirects + 1):
        answer = _hop(method, url, headers, body, policy, deadline, max_bytes, purpose)
        location = answer.header("location")
        if answer.status not in REDIRECT_STATUSES or not location or hop == redirects:
            break
        following = urljoin(url, location)
        if urlsplit(following).hostname != urlsplit(url).hostname:
            headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
        if answer.status == 303 or (answer.status in (301, 302) and method == "POST"):
            method, body = "GET", None
        url = following
    return answer


def _hop(method, url, headers, body, policy, deadline, max_bytes, purpose) -> Response:
    """One exchange, logged: method, host, status or error, and time."""
    started = time.monotonic()
    host = urlsplit(url).netloc.rsplit("@", 1)[-1]
    try:
        answer = _exchange(
            method, url, headers, body, policy=policy, deadline=deadline, max_bytes=max_bytes
        )
    except OutboundError as exc:
        _log(purpose, method, host, f"{type(exc).__name__}: {exc}", started)
        raise
    _log(purpose, method, host, answer.status, started)
    return answer


def _log(purpose: str, method: str, host: str, outcome, started: float) -> None:
    seconds = time.monotonic() - started
    logger.info("outbound %s %s %s: %s in %.3f s", purpose or "-", method, host, outcome, seconds)
