import pytest
from django.test import Client

from parity.digest.services import subscription_subscribe
from parity.models import Subscription
from tests.digest import scenario as s


@pytest.fixture
def subscription(project) -> Subscription:
    return subscription_subscribe(project=project, email="alice@example.com")[0]


def test_the_preview_shows_this_weeks_digest(project, client):
    page = client.get("/p/pytorch-xla/digest/")

    assert page.status_code == 200
    html = page.content.decode()
    assert "This week's digest so far" in html
    assert "<strong>Quiet week:</strong>" in html
    assert "Plain-text part" in html and "Unsubscribe" not in html.split("<main>")[1]


def test_every_project_page_links_the_digest_preview(project, client):
    heatmap = client.get("/p/pytorch-xla/").content.decode()
    preview = client.get("/p/pytorch-xla/digest/").content.decode()

    assert 'href="/p/pytorch-xla/digest/" title="Weekly digest">Digest</a>' in heatmap
    current = 'href="/p/pytorch-xla/digest/" aria-current="page" title="Weekly digest">Digest</a>'
    assert current in preview


def test_the_preview_of_another_week_and_backend(xla, upload_run, client):
    s.upload_week13(upload_run)
    s.upload_week14(upload_run)

    html = client.get("/p/pytorch-xla/digest/?week=2026-W14&backend=tpu").content.decode()

    assert (
        "[parity] pytorch-xla (tpu) 2026-W14: 2 new gaps (1 untracked), 1 new skip reason" in html
    )
    assert s.T[3] in html and s.T[4] in html and s.T[7] not in html


def test_the_preview_refuses_a_bad_week_and_an_unknown_project(project, client, admin_client):
    refused = client.get("/p/pytorch-xla/digest/?week=soon")
    assert refused.status_code == 400
    # A page, not bare text: why, and this week's digest with its links to other weeks.
    html = refused.content.decode()
    assert "&#x27;soon&#x27; is not an ISO week like 2026-W14. This week&#x27;s digest" in html
    assert "<title>" in html and "?week=" in html
    assert admin_client.get("/p/nope/digest/").status_code == 404  # anonymous: to the login


def test_get_asks_and_post_unsubscribes(subscription):
    client = Client(enforce_csrf_checks=True)
    url = f"/digest/unsubscribe/{subscription.token}/"

    page = client.get(url)
    assert page.status_code == 200
    assert b"Stop sending the weekly parity digest of <strong>pytorch-xla</strong>" in page.content
    subscription.refresh_from_db()
    assert subscription.active  # a link prefetcher does not unsubscribe anyone

    # A mail client's RFC 8058 one-click POST: no cookie, no CSRF token.
    page = client.post(
        url, "List-Unsubscribe=One-Click", content_type="application/x-www-form-urlencoded"
    )
    assert page.status_code == 200
    assert b"no longer gets the weekly parity digest" in page.content
    subscription.refresh_from_db()
    assert not subscription.active and subscription.unsubscribed_at is not None

    assert client.post(url).status_code == 200  # twice is fine


def test_an_unknown_token_is_not_found(subscription, client):
    assert client.get("/digest/unsubscribe/not-a-token/").status_code == 404
    assert client.post("/digest/unsubscribe/not-a-token/").status_code == 404
