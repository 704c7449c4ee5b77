"""A real SMTP server (aiosmtpd on 127.0.0.1) for the digest tests, and a two-week scenario
uploaded through the API."""

import email
import email.policy
import socket
from dataclasses import dataclass, field
from email.message import EmailMessage
from html.parser import HTMLParser

import pytest
from aiosmtpd.controller import Controller

# The engine tests' fixtures: runs uploaded through the API, as CI sends them, and recomputed.
from tests.parity.conftest import upload_run, xla  # noqa: F401


@dataclass
class Received:
    mail_from: str
    rcpt_tos: list[str]
    message: EmailMessage
    raw: bytes

    @property
    def text(self) -> str:
        # SMTP carries CRLF line ends; the part was written with LF.
        return self.message.get_body(("plain",)).get_content().replace("\r\n", "\n")

    @property
    def html(self) -> str:
        return self.message.get_body(("html",)).get_content()


@dataclass
class Recorder:
    """An aiosmtpd handler that keeps what it accepts and refuses some recipients (550)."""

    refuse: set[str] = field(default_factory=set)
    received: list[Received] = field(default_factory=list)

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address in self.refuse:
            return f"550 5.1.1 <{address}>: mailbox unavailable"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        self.received.append(
            Received(envelope.mail_from, list(envelope.rcpt_tos), message, envelope.content)
        )
        return "250 Message accepted for delivery"

    def to(self, address: str) -> list[Received]:
        return [r for r in self.received if address in r.rcpt_tos]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def smtp(settings):
    """Start an SMTP server and point Django's SMTP backend at it."""
    recorder = Recorder()
    controller = Controller(recorder, hostname="127.0.0.1", port=free_port())
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", controller.port
    settings.EMAIL_USE_TLS, settings.EMAIL_HOST_USER, settings.EMAIL_HOST_PASSWORD = False, "", ""
    try:
        yield recorder
    finally:
        controller.stop()


@pytest.fixture(autouse=True)
def _digest_settings(settings):
    settings.SITE_URL = "https://parity.example.org"
    settings.DEFAULT_FROM_EMAIL = "parity@example.org"
    settings.PARITY_DIGEST_SKIP_QUIET = False
    settings.PARITY_DIGEST_MAX_GAPS = 50


class _Visible(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.words: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        if tag == "a":
            self.links.append(dict(attrs)["href"])

    def handle_data(self, data) -> None:
        self.words.append(data)


def visible(html: str) -> tuple[str, list[str]]:
    """The text a reader sees in an HTML part (whitespace collapsed), and its links in order."""
    parser = _Visible()
    parser.feed(html)
    return " ".join(" ".join(parser.words).split()), parser.links
