"""Webhook deliveries under the egress policy and the whole-attempt deadline: where a refused
URL is refused (saving it, or the delivery that finds its name resolving to a refused address),
a redirect never followed, and a trickling receiver cut off.

Every listener is on a loopback address; a refused internal address is only ever the answer of
a patched resolver, and the test asserts that no connection was attempted."""

import html
import re
import socket
import time

import pytest
from django.core.exceptions import ValidationError

from parity.models import Project, WebhookAttempt, WebhookDelivery, WebhookEndpoint
from parity.services import webhooks
from tests.webhook_receiver import (
    OkReceiver,
    RedirectingReceiver,
    TricklingReceiver,
    WebhookReceiver,
)

pytestmark = pytest.mark.django_db


def deliver(project: Project, url: str, receiver: WebhookReceiver | None = None):
    """One event to an endpoint at ``url`` (saved as a row, as one saved before the policy
    or whose DNS changed since), and its first attempt."""
    endpoint = WebhookEndpoint.objects.create(project=project, url=url)
    if receiver is not None:
        receiver.secret = endpoint.secret
    [delivery_id] = webhooks.notice_record(
        project=project,
        event="digest_ready",
        payload={"week": "2026-W14"},
        summary={"title": "ready", "url": "", "sections": []},
        key="digest_ready:2026-W14",
    )
    webhooks.delivery_attempt(delivery_id=delivery_id)
    return WebhookDelivery.objects.get(pk=delivery_id)


def attempt_of(delivery: WebhookDelivery) -> WebhookAttempt:
    [attempt] = WebhookAttempt.objects.filter(delivery=delivery)
    return attempt


def test_a_loopback_receiver_is_refused_without_the_setting(project, settings):
    settings.PARITY_OUTBOUND_ALLOW = "external"
    with WebhookReceiver() as receiver:
        delivery = deliver(project, receiver.url)
    assert receiver.received == []
    assert (delivery.status, delivery.attempts) == ("failed", 1)  # refused for good: no retry
    attempt = attempt_of(delivery)
    assert attempt.status_code is None and attempt.next_retry_at is None
    assert "not sent" in attempt.error and "127.0.0.1 is a loopback address" in attempt.error
    assert "PARITY_OUTBOUND_ALLOW" in attempt.error


def test_a_loopback_receiver_is_delivered_to_when_the_setting_lists_it(project, settings):
    settings.PARITY_OUTBOUND_ALLOW = "external,127.0.0.1"
    with WebhookReceiver() as receiver:
        delivery = deliver(project, receiver.url, receiver)
    assert delivery.status == "delivered"
    assert [r.status for r in receiver.received] == [200]


def test_a_redirect_is_never_followed_to_a_refused_address(project, settings):
    settings.PARITY_OUTBOUND_ALLOW = "127.0.0.1"  # 127.0.0.2 is refused
    inside = OkReceiver(host="127.0.0.2")
    with inside, RedirectingReceiver(inside.url("/latest/meta-data/")) as receiver:
        delivery = deliver(project, receiver.url())
    assert inside.connections == 0  # neither the signed body nor a GET went there
    assert (delivery.status, delivery.attempts) == ("failed", 1)
    attempt = attempt_of(delivery)
    assert attempt.status_code == 302
    assert "a redirect (to http://127.0.0.2:" in attempt.error and "not followed" in attempt.error
    assert "meta-data" not in attempt.error


def test_a_name_resolving_to_a_refused_address_fails_the_delivery_without_connecting(
    project, monkeypatch
):
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host == "evil.test":  # its DNS changed since the endpoint was saved
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("169.254.169.254", port))]
        return real(host, port, *args, **kwargs)

    attempted: list = []
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: attempted.append(a))
    delivery = deliver(project, "http://evil.test/hook")
    assert attempted == []
    assert (delivery.status, delivery.attempts) == ("failed", 1)
    error = attempt_of(delivery).error
    assert "evil.test resolves to 169.254.169.254, which is a link-local address" in error


def test_a_trickling_receiver_is_cut_off_at_the_timeout_of_the_whole_attempt(project, settings):
    settings.PARITY_WEBHOOK_TIMEOUT_SECONDS = 3
    with TricklingReceiver(every=2.0) as slow:
        started = time.monotonic()
        delivery = deliver(project, slow.url())
        seconds = time.monotonic() - started
    # Each byte came within the timeout of one read; the answer whole would take two minutes.
    assert seconds < 5, seconds
    attempt = attempt_of(delivery)
    assert attempt.error == "TimedOut: no whole answer within 3 s"
    assert (delivery.status, attempt.next_retry_at is not None) == ("pending", True)


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address"),
        ("http://127.0.0.1:8000/hook", "127.0.0.1 is a loopback address"),
        ("http://10.0.0.5/hook", "10.0.0.5 is a private address"),
        ("http://192.168.1.20/hook", "192.168.1.20 is a private address"),
        ("http://[::1]:9000/hook", "::1 is a loopback address"),
        ("http://[fd00::1]/hook", "fd00::1 is a unique-local address"),
        ("ftp://files.example.org/hook", "only http:// and https:// URLs are sent to"),
    ],
)
def test_saving_a_refused_url_says_why_and_which_setting_allows_it(project, settings, url, said):
    settings.PARITY_OUTBOUND_ALLOW = "external"
    endpoint = WebhookEndpoint(project=project, url=url)
    with pytest.raises(ValidationError) as refused:
        endpoint.full_clean()
    [message] = refused.value.message_dict["url"]
    assert said in message
    if not url.startswith("ftp"):
        assert "PARITY_OUTBOUND_ALLOW" in message


def test_the_admin_form_refuses_an_internal_url_beside_the_field(admin_client, project, settings):
    settings.PARITY_OUTBOUND_ALLOW = "external"
    for url in ("http://169.254.169.254/latest/meta-data/", "192.168.1.1/hook"):
        response = admin_client.post(
            "/admin/parity/webhookendpoint/add/",
            {"project": project.pk, "url": url, "format": "json", "active": "on"},
        )
        assert response.status_code == 200  # the form again, not a redirect to the list
        text = html.unescape(re.sub(r"\s+", " ", response.content.decode()))
        assert "is refused:" in text and "PARITY_OUTBOUND_ALLOW" in text, url
    assert not WebhookEndpoint.objects.exists()


def test_a_tracker_template_on_an_internal_address_is_refused(project, settings):
    settings.PARITY_OUTBOUND_ALLOW = "external"
    project.issue_url_template = "http://10.1.1.1/group/proj/-/issues/{number}"
    with pytest.raises(ValidationError) as refused:
        project.full_clean()
    [message] = refused.value.message_dict["issue_url_template"]
    assert "10.1.1.1 is a private address" in message and "PARITY_OUTBOUND_ALLOW" in message
    settings.PARITY_OUTBOUND_ALLOW = "external,10.1.0.0/16"
    project.full_clean()
