"""The admin of webhooks: an endpoint is added there (its secret shown once it is saved), and
the delivery log is read there, never edited."""

import re

from cryptography.fernet import Fernet

from parity.models import (
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookNotice,
)


def test_an_endpoint_is_added_and_its_secret_shown_after(admin_client, project):
    add = admin_client.get("/admin/parity/webhookendpoint/add/")
    assert add.status_code == 200
    assert b"Secret" not in add.content  # a secret shown here would not be the one saved
    response = admin_client.post(
        "/admin/parity/webhookendpoint/add/",
        {
            "project": project.pk,
            "url": "https://hooks.example.org/parity",
            "format": "slack",
            "events": ["untracked_gaps", "coverage_drop"],
            "active": "on",
        },
    )
    assert response.status_code == 302, response.content
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.events == ["untracked_gaps", "coverage_drop"]
    assert len(endpoint.secret) >= 40
    page = admin_client.get(f"/admin/parity/webhookendpoint/{endpoint.pk}/change/")
    assert endpoint.secret in page.content.decode()


def test_a_secret_no_key_opens_is_said_so_not_a_500(admin_client, project, settings):
    settings.PARITY_SECRETS_KEYS = [Fernet.generate_key().decode()]
    endpoint = WebhookEndpoint.objects.create(project=project, url="https://x.example.org/")
    settings.PARITY_SECRETS_KEYS = [Fernet.generate_key().decode()]  # the old key not listed
    assert admin_client.get("/admin/parity/webhookendpoint/").status_code == 200
    page = admin_client.get(f"/admin/parity/webhookendpoint/{endpoint.pk}/change/")
    assert page.status_code == 200
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.content.decode()))
    assert "This secret cannot be read" in text and "PARITY_SECRETS_KEYS" in text
    assert endpoint.secret not in text


def test_an_unknown_event_is_refused(admin_client, project):
    response = admin_client.post(
        "/admin/parity/webhookendpoint/add/",
        {
            "project": project.pk,
            "url": "https://x.example.org/",
            "format": "json",
            "events": ["gaps_everywhere"],
        },  # fmt: skip
    )
    assert response.status_code == 200
    assert "gaps_everywhere is not one of the available choices" in response.content.decode()
    assert not WebhookEndpoint.objects.exists()


def test_the_delivery_log_is_read_only(admin_client, project):
    endpoint = WebhookEndpoint.objects.create(project=project, url="https://x.example.org/")
    notice = WebhookNotice.objects.create(project=project, event="digest_ready")
    delivery = WebhookDelivery.objects.create(
        notice=notice, endpoint=endpoint, attempts=1, next_attempt_at=notice.created_at
    )
    WebhookAttempt.objects.create(
        delivery=delivery,
        number=1,
        at=notice.created_at,
        body_sha256="ab" * 32,
        status_code=503,
        error="HTTP 503 Service Unavailable",
    )
    listing = admin_client.get("/admin/parity/webhookdelivery/")
    assert listing.status_code == 200 and "digest_ready" in listing.content.decode()
    page = admin_client.get(f"/admin/parity/webhookdelivery/{delivery.pk}/change/").content
    text = re.sub(r"<[^>]+>", " ", page.decode())
    assert "HTTP 503 Service Unavailable" in text
    assert 'name="_save"' not in page.decode()  # nothing to save
    assert admin_client.get("/admin/parity/webhookdelivery/add/").status_code == 403
