"""The outbound room's requests (``parity.outbound.transport``) against listeners on loopback
addresses: the policy judges before any connection, the connection goes to the judged address,
redirects are judged again, and one deadline bounds the whole request.

Refusals of other addresses are tested without connecting: a patched resolver answers
``evil.test`` with an internal address and the test asserts no connection was attempted. No
test sends to any address outside 127.0.0.0/8."""

import logging
import socket
import time

import pytest

from parity.outbound import transport
from parity.outbound.policy import Policy
from tests.webhook_receiver import OkReceiver, RedirectingReceiver, TricklingReceiver

LOOPBACK_ONLY = Policy.parse("127.0.0.1")


@pytest.fixture
def connections(monkeypatch):
    """Every address a request connects to (the connection is then made for real)."""
    made: list[tuple] = []
    real = socket.create_connection

    def spy(address, *args, **kwargs):
        made.append(address)
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", spy)
    return made


@pytest.fixture
def resolver(monkeypatch):
    """Names of ``.test`` resolved as ``answers`` says; each lookup counted."""
    answers: dict[str, list[str]] = {}
    asked: list[str] = []
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if not str(host).endswith(".test"):
            return real(host, port, *args, **kwargs)
        asked.append(host)
        addresses = answers[host]
        if len(addresses) > 1 and asked.count(host) > 1:  # a rebinding server's second answer
            addresses = addresses[1:]
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in addresses[:1]]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return answers, asked


def get(url: str, policy: Policy, **options) -> transport.Response:
    options.setdefault("timeout", 5)
    return transport.request("GET", url, policy=policy, **options)


def test_a_loopback_receiver_is_reached_when_listed_and_refused_otherwise(connections):
    with OkReceiver() as receiver:
        assert get(receiver.url(), LOOPBACK_ONLY).status == 200
        with pytest.raises(transport.Refused, match="127.0.0.1 is a loopback address"):
            get(receiver.url(), Policy.parse("external"))
    assert receiver.connections == 1
    assert connections == [("127.0.0.1", receiver.port)]


def test_a_redirect_to_a_refused_address_is_refused_before_connecting(connections):
    target = OkReceiver(host="127.0.0.2")
    with target, RedirectingReceiver(target.url("/latest/meta-data/")) as allowed:
        with pytest.raises(transport.Refused, match="127.0.0.2 is a loopback address"):
            get(allowed.url(), LOOPBACK_ONLY, redirects=3)
        # Not followed, the redirect is the caller's to read.
        assert get(allowed.url(), LOOPBACK_ONLY).status == 302
    assert target.connections == 0
    assert connections == [("127.0.0.1", allowed.port)] * 2


def test_a_redirect_to_an_allowed_address_is_followed_without_the_token_to_another_host():
    target = OkReceiver(host="127.0.0.2")
    with target, RedirectingReceiver(target.url("/keys")) as first:
        policy = Policy.parse("127.0.0.1,127.0.0.2")
        headers = {"Authorization": "Bearer s3cret"}
        answer = get(first.url(), policy, redirects=3, headers=headers)
    assert (answer.status, answer.url) == (200, target.url("/keys"))
    assert b"s3cret" in first.requests[0] and b"s3cret" not in target.requests[0]


@pytest.mark.parametrize("internal", ["169.254.169.254", "10.0.0.1", "192.168.1.1"])
def test_a_name_resolving_to_a_refused_address_is_refused_without_connecting(
    monkeypatch, resolver, internal
):
    answers, _ = resolver
    answers["evil.test"] = [internal]
    attempted: list = []
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: attempted.append(a))
    with pytest.raises(transport.Refused) as refused:
        get("http://evil.test/latest/meta-data/", Policy.parse("external"))
    assert f"evil.test resolves to {internal}, which is a" in str(refused.value)
    assert "PARITY_OUTBOUND_ALLOW" in str(refused.value)
    assert attempted == []


def test_the_connection_goes_to_the_address_judged_not_a_second_lookup(resolver, connections):
    answers, asked = resolver
    with OkReceiver() as receiver:
        # A rebinding DNS server: 127.0.0.1 (allowed) first, then 169.254.169.254.
        answers["rebind.test"] = ["127.0.0.1", "169.254.169.254"]
        answer = get(f"http://rebind.test:{receiver.port}/hook", LOOPBACK_ONLY)
    assert answer.status == 200
    assert asked == ["rebind.test"]
    assert connections == [("127.0.0.1", receiver.port)]
    assert f"Host: rebind.test:{receiver.port}".encode() in receiver.requests[0]


def test_a_trickling_receiver_is_cut_off_at_the_deadline_of_the_whole_request():
    with TricklingReceiver(every=2.0) as slow:
        started = time.monotonic()
        with pytest.raises(transport.TimedOut):
            get(slow.url(), LOOPBACK_ONLY, timeout=3)
        seconds = time.monotonic() - started
    # Each byte came within any per-read timeout; the whole answer would take two minutes.
    assert 2.9 < seconds < 4.5, seconds
    assert slow.bytes_sent <= 3


def test_an_answer_longer_than_the_cap_is_not_read_whole():
    with OkReceiver(body=b"x" * 5000) as receiver, pytest.raises(transport.TooLarge) as too_large:
        get(receiver.url(), LOOPBACK_ONLY, max_bytes=1000)
    assert too_large.value.status == 200


def test_each_request_is_logged_without_its_path(caplog):
    caplog.set_level(logging.INFO, logger="parity.outbound")
    with OkReceiver() as receiver:
        get(receiver.url("/services/T0/B0/secret-part"), LOOPBACK_ONLY, purpose="webhook")
    [record] = [r for r in caplog.records if r.name == "parity.outbound"]
    message = record.getMessage()
    assert message.startswith(f"outbound webhook GET 127.0.0.1:{receiver.port}: 200 in ")
    assert "secret-part" not in message


def test_schemes_other_than_http_are_refused_whatever_the_setting(monkeypatch):
    attempted: list = []
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: attempted.append(a))
    for url in ("ftp://127.0.0.1/", "file:///etc/passwd", "127.0.0.1:21/x"):
        with pytest.raises(transport.Refused, match="only http:// and https://"):
            get(url, Policy.parse("*"))
    assert attempted == []


def test_a_resolver_that_hangs_is_bounded_by_the_deadline_too(monkeypatch):
    real = socket.getaddrinfo

    def hanging(host, port, *args, **kwargs):
        if host != "slow.test":
            return real(host, port, *args, **kwargs)
        time.sleep(5)  # a resolver that answers late, and then only with loopback
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    monkeypatch.setattr(socket, "getaddrinfo", hanging)
    started = time.monotonic()
    with pytest.raises(transport.TimedOut, match="slow.test did not resolve"):
        get("http://slow.test/hook", LOOPBACK_ONLY, timeout=1)
    assert time.monotonic() - started < 2
