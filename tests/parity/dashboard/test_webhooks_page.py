"""The project's webhooks page: its maintainers list, add, change and remove its endpoints, see
their recent deliveries and send a test event; a secret is shown once, in the answer that made
it; and a maintainer of one project can do none of it on another (issue 48)."""

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.test import Client
from django.utils import timezone

from parity.models import (
    Membership,
    Role,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookNotice,
)
from parity.services.projects import project_create
from parity.services.webhook_endpoints import (
    EndpointRejected,
    EndpointRequest,
    webhook_endpoint_create,
)
from tests.parity.dashboard.conftest import text


def _private(slug: str):
    return project_create(slug=slug, backends=["cpu", "gpu"], reference="cpu", visibility="private")


def _member(project, name: str, role: str = Role.MAINTAINER, *, staff: bool = False) -> Client:
    user = get_user_model().objects.create_user(name, password="x" * 12, is_staff=staff)
    Membership.objects.create(user=user, project=project, role=role)
    client = Client()
    client.force_login(user)
    client.user = user
    return client


@pytest.fixture
def alpha(db):
    return _private("alpha")


@pytest.fixture
def beta(db):
    return _private("beta")


@pytest.fixture
def alice(alpha) -> Client:
    return _member(alpha, "alice")


@pytest.fixture
def beta_endpoint(beta) -> WebhookEndpoint:
    endpoint, _ = webhook_endpoint_create(
        project=beta, request=EndpointRequest(url="https://beta.example.org/hook")
    )
    return endpoint


NEW = {"url": "https://hooks.example.org/parity", "format": "json", "active": "on"}


def test_a_maintainer_adds_an_endpoint_and_sees_its_secret_once(alice, alpha):
    response = alice.post("/p/alpha/webhooks/", {**NEW, "events": ["untracked_gaps"]})

    endpoint = WebhookEndpoint.objects.get()
    assert (endpoint.project, endpoint.url, endpoint.events) == (
        alpha,
        NEW["url"],
        ["untracked_gaps"],
    )
    page = text(response)
    assert endpoint.secret in page and "not show it again" in page
    assert "no-store" in response["Cache-Control"]
    again = text(alice.get("/p/alpha/webhooks/"))
    assert "hooks.example.org/parity" in again
    assert endpoint.secret not in again
    assert endpoint.secret not in text(alice.get(f"/p/alpha/webhooks/{endpoint.pk}/"))


def test_a_secret_given_is_kept_and_a_new_one_shown_once(alice, alpha):
    alice.post("/p/alpha/webhooks/", {**NEW, "secret": "s3cret-of-the-receiver-0123456789"})
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.secret == "s3cret-of-the-receiver-0123456789"

    renewed = text(alice.post(f"/p/alpha/webhooks/{endpoint.pk}/secret/"))

    endpoint.refresh_from_db()
    assert endpoint.secret != "s3cret-of-the-receiver-0123456789"
    assert endpoint.secret in renewed
    assert endpoint.secret not in text(alice.get("/p/alpha/webhooks/"))


def test_the_page_lists_recent_deliveries_with_status_and_error(alice, alpha):
    endpoint, _ = webhook_endpoint_create(
        project=alpha, request=EndpointRequest(url="https://a.example.org/hook")
    )
    notice = WebhookNotice.objects.create(project=alpha, event="coverage_drop")
    delivery = WebhookDelivery.objects.create(
        notice=notice,
        endpoint=endpoint,
        attempts=1,
        status="failed",
        next_attempt_at=timezone.now(),
    )
    WebhookAttempt.objects.create(
        delivery=delivery,
        number=1,
        at=timezone.now(),
        body_sha256="ab" * 32,
        status_code=410,
        error="HTTP 410 Gone",
    )

    page = text(alice.get("/p/alpha/webhooks/"))

    assert "coverage_drop" in page and "failed" in page and "HTTP 410 Gone" in page


def test_change_ping_and_delete(alice, alpha):
    alice.post("/p/alpha/webhooks/", NEW)
    endpoint = WebhookEndpoint.objects.get()

    changed = alice.post(
        f"/p/alpha/webhooks/{endpoint.pk}/",
        {"url": "https://other.example.org/x", "format": "json", "events": ["digest_ready"]},
    )
    assert changed.status_code == 302
    endpoint.refresh_from_db()
    assert (endpoint.url, endpoint.events, endpoint.active) == (
        "https://other.example.org/x",
        ["digest_ready"],
        False,
    )

    assert alice.post(f"/p/alpha/webhooks/{endpoint.pk}/ping/").status_code == 302
    ping = WebhookDelivery.objects.select_related("notice").get(endpoint=endpoint)
    assert (ping.notice.event, ping.status) == ("ping", "pending")  # paused: sent all the same

    assert alice.post(f"/p/alpha/webhooks/{endpoint.pk}/delete/").status_code == 302
    assert not WebhookEndpoint.objects.exists()


def test_a_slack_url_is_not_shown_again_and_kept_when_left_empty(alice, alpha):
    url = "https://hooks.slack.com/services/T000/B000/abcdefghijklmnopWXYZ"
    alice.post("/p/alpha/webhooks/", {**NEW, "url": url, "format": "slack"})
    endpoint = WebhookEndpoint.objects.get()

    assert "abcdefghijklmnop" not in text(alice.get("/p/alpha/webhooks/"))
    assert "abcdefghijklmnop" not in text(alice.get(f"/p/alpha/webhooks/{endpoint.pk}/"))
    alice.post(f"/p/alpha/webhooks/{endpoint.pk}/", {"url": "", "format": "slack", "active": "on"})
    endpoint.refresh_from_db()
    assert endpoint.url == url


def test_the_models_own_check_refuses_on_the_page_and_nothing_is_stored(alice, alpha, monkeypatch):
    def refuse(self):
        raise ValidationError({"url": "refused by the egress policy"})

    monkeypatch.setattr(WebhookEndpoint, "clean", refuse)

    page = text(alice.post("/p/alpha/webhooks/", NEW))

    assert "refused by the egress policy" in page
    assert not WebhookEndpoint.objects.exists()


def test_the_service_validates_the_whole_row(db):
    with pytest.raises(EndpointRejected) as refused:
        webhook_endpoint_create(
            project=_private("gamma"),
            request=EndpointRequest(url="https://x.example.org/" + "a" * 500),
        )
    assert "url" in refused.value.errors
    with pytest.raises(EndpointRejected, match="Unknown event"):
        webhook_endpoint_create(
            project=_private("delta"),
            request=EndpointRequest(url="https://x.example.org/", events=("ping",)),
        )
    assert not WebhookEndpoint.objects.exists()


# Isolation: a maintainer of alpha, on beta.


def test_a_maintainer_of_one_project_cannot_list_read_or_create_on_another(
    alice, beta, beta_endpoint
):
    assert alice.get("/p/alpha/webhooks/").status_code == 200  # her own project's page
    assert alice.get("/p/beta/webhooks/").status_code == 404
    assert alice.post("/p/beta/webhooks/", NEW).status_code == 404
    assert alice.get(f"/p/beta/webhooks/{beta_endpoint.pk}/").status_code == 404
    for action in ("", "ping/", "secret/", "delete/"):
        assert alice.post(f"/p/beta/webhooks/{beta_endpoint.pk}/{action}", NEW).status_code == 404
        # Nor through its own project's URL with beta's endpoint id.
        assert alice.post(f"/p/alpha/webhooks/{beta_endpoint.pk}/{action}", NEW).status_code == 404
    assert WebhookEndpoint.objects.get().url == "https://beta.example.org/hook"
    assert not WebhookDelivery.objects.exists()
    assert WebhookEndpoint.objects.count() == 1
    assert beta_endpoint.secret not in alice.get("/p/alpha/webhooks/").content.decode()


def test_readers_and_strangers_are_refused(alpha, beta):
    viewer = _member(alpha, "vera", Role.VIEWER)
    assert viewer.get("/p/alpha/webhooks/").status_code == 403
    assert viewer.post("/p/alpha/webhooks/", NEW).status_code == 403
    anonymous = Client().get("/p/alpha/webhooks/")
    assert anonymous.status_code == 302 and "/login" in anonymous["Location"]
    public = project_create(slug="open", backends=["cpu"], reference="cpu", visibility="public")
    assert viewer.get(f"/p/{public.slug}/webhooks/").status_code == 403
    assert not WebhookEndpoint.objects.exists()


def test_the_tab_shows_for_maintainers_only(alice, alpha):
    assert "/p/alpha/webhooks/" in alice.get("/p/alpha/exemptions/").content.decode()
    viewer = _member(alpha, "vera", Role.VIEWER)
    assert "/p/alpha/webhooks/" not in viewer.get("/p/alpha/exemptions/").content.decode()
