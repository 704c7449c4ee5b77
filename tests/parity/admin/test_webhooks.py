"""The admin of webhooks: an endpoint is added there (its secret shown once it is saved), and
the delivery log is read there, never edited."""

import re

import pytest
from cryptography.fernet import Fernet
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from parity.models import (
    Membership,
    Role,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookNotice,
)
from parity.services.projects import project_create


def test_an_endpoint_is_added_and_its_secret_shown_once(admin_client, project):
    add = admin_client.get("/admin/parity/webhookendpoint/add/")
    assert add.status_code == 200
    assert b"Secret" not in add.content  # a secret shown here would not be the one saved
    response = admin_client.post(
        "/admin/parity/webhookendpoint/add/",
        {
            "project": project.pk,
            "url": "https://hooks.example.org/parity",
            "format": "json",
            "events": ["untracked_gaps", "coverage_drop"],
            "active": "on",
        },
    )
    assert response.status_code == 200, response.content
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.events == ["untracked_gaps", "coverage_drop"]
    assert len(endpoint.secret) >= 40
    assert endpoint.secret in response.content.decode()
    assert "no-store" in response["Cache-Control"]
    page = admin_client.get(f"/admin/parity/webhookendpoint/{endpoint.pk}/change/")
    assert page.status_code == 200
    assert endpoint.secret not in page.content.decode()  # never after


def test_a_secret_no_key_opens_is_not_a_500(admin_client, project, settings):
    settings.PARITY_SECRETS_KEYS = [Fernet.generate_key().decode()]
    endpoint = WebhookEndpoint.objects.create(project=project, url="https://x.example.org/")
    settings.PARITY_SECRETS_KEYS = [Fernet.generate_key().decode()]  # the old key not listed
    assert admin_client.get("/admin/parity/webhookendpoint/").status_code == 200
    page = admin_client.get(f"/admin/parity/webhookendpoint/{endpoint.pk}/change/")
    assert page.status_code == 200  # the secret is never shown there, readable or not


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


# Scoped per project (issue 48): staff with only the webhook permissions, maintainer of alpha.


@pytest.fixture
def alpha_staff(db):
    alpha = project_create(slug="alpha", backends=["cpu"], reference="cpu", visibility="private")
    beta = project_create(slug="beta", backends=["cpu"], reference="cpu", visibility="private")
    user = get_user_model().objects.create_user("sam", password="x" * 12, is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(
            content_type__app_label="parity",
            content_type__model__in=["webhookendpoint", "webhookdelivery"],
        )
    )
    Membership.objects.create(user=user, project=alpha, role=Role.MAINTAINER)
    client = Client()
    client.force_login(user)
    mine = WebhookEndpoint.objects.create(project=alpha, url="https://alpha.example.org/h")
    theirs = WebhookEndpoint.objects.create(project=beta, url="https://beta.example.org/h")
    notice = WebhookNotice.objects.create(project=beta, event="digest_ready")
    delivery = WebhookDelivery.objects.create(
        notice=notice, endpoint=theirs, next_attempt_at=notice.created_at
    )
    return client, alpha, beta, mine, theirs, delivery


def test_staff_see_and_edit_only_the_endpoints_of_projects_they_maintain(alpha_staff):
    client, alpha, beta, mine, theirs, delivery = alpha_staff

    listing = client.get("/admin/parity/webhookendpoint/").content.decode()
    assert "alpha.example.org" in listing and "beta.example.org" not in listing
    assert client.get(f"/admin/parity/webhookendpoint/{mine.pk}/change/").status_code == 200
    other = client.get(f"/admin/parity/webhookendpoint/{theirs.pk}/change/")
    assert other.status_code == 302  # "does not exist", back to the list
    assert theirs.secret not in other.content.decode()
    deliveries = client.get("/admin/parity/webhookdelivery/").content.decode()
    assert f'name="_selected_action" value="{delivery.pk}"' not in deliveries
    assert client.get(f"/admin/parity/webhookdelivery/{delivery.pk}/change/").status_code == 302


def test_staff_cannot_add_change_or_delete_on_a_project_they_do_not_maintain(alpha_staff):
    client, alpha, beta, mine, theirs, delivery = alpha_staff
    add = client.get("/admin/parity/webhookendpoint/add/").content.decode()
    assert ">alpha<" in add and ">beta<" not in add

    response = client.post(
        "/admin/parity/webhookendpoint/add/",
        {"project": beta.pk, "url": "https://evil.example.org/", "format": "json", "active": "on"},
    )
    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()
    client.post(
        f"/admin/parity/webhookendpoint/{theirs.pk}/change/",
        {"project": alpha.pk, "url": "https://evil.example.org/", "format": "json"},
    )
    client.post(f"/admin/parity/webhookendpoint/{theirs.pk}/delete/", {"post": "yes"})
    theirs.refresh_from_db()
    assert (theirs.project, theirs.url) == (beta, "https://beta.example.org/h")
    assert not [e for e in WebhookEndpoint.objects.all() if "evil" in e.url]
