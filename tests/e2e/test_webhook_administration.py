"""Cross-project webhook administration through the live stack (gunicorn; issue 48): a staff
user given only the webhook permissions, maintainer of one private project, can manage that
project's endpoints and can neither list, read, create on nor change another private
project's, on its webhooks page or in the admin, and never reads a secret back."""

import re

import pytest
import requests
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from parity.models import Membership, Role, WebhookEndpoint
from parity.services.projects import project_create
from parity.services.webhook_endpoints import EndpointRequest, webhook_endpoint_create

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


@pytest.fixture
def sam(live):
    """alpha's maintainer, staff with the webhook permissions only, signed in; and beta's
    endpoint, made by someone else."""
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
    theirs, secret = webhook_endpoint_create(
        project=beta, request=EndpointRequest(url="https://beta.example.org/hook")
    )
    signed_in = Client()
    signed_in.force_login(user)
    browser = requests.Session()
    browser.cookies.set("sessionid", signed_in.cookies["sessionid"].value)
    return browser, alpha, beta, theirs, secret


def _form(browser: requests.Session, url: str) -> str:
    page = browser.get(url, timeout=30)
    assert page.status_code == 200, page.status_code
    return _CSRF.search(page.text).group(1)


def test_a_maintainer_of_one_project_administers_only_its_webhooks(live, sam):
    browser, alpha, beta, theirs, secret = sam
    base = live.base_url
    new = {"url": "https://alpha.example.org/hook", "format": "json", "active": "on"}

    csrf = _form(browser, f"{base}/p/alpha/webhooks/")
    made = browser.post(
        f"{base}/p/alpha/webhooks/",
        data={**new, "csrfmiddlewaretoken": csrf},
        headers={"Referer": base},
        timeout=30,
    )
    assert made.status_code == 200 and "not show it again" in made.text
    mine = WebhookEndpoint.objects.get(project=alpha)
    assert mine.secret in made.text
    assert mine.secret not in browser.get(f"{base}/p/alpha/webhooks/", timeout=30).text

    for path in ("/p/beta/webhooks/", f"/p/beta/webhooks/{theirs.pk}/"):
        assert browser.get(f"{base}{path}", timeout=30).status_code == 404
    for path in ("/p/beta/webhooks/", f"/p/alpha/webhooks/{theirs.pk}/delete/"):
        refused = browser.post(
            f"{base}{path}",
            data={**new, "csrfmiddlewaretoken": csrf},
            headers={"Referer": base},
            timeout=30,
        )
        assert refused.status_code == 404, path

    listing = browser.get(f"{base}/admin/parity/webhookendpoint/", timeout=30)
    assert listing.status_code == 200
    assert "alpha.example.org" in listing.text and "beta.example.org" not in listing.text
    other = browser.get(
        f"{base}/admin/parity/webhookendpoint/{theirs.pk}/change/",
        timeout=30,
        allow_redirects=False,
    )
    assert other.status_code == 302 and secret not in other.text
    csrf = _form(browser, f"{base}/admin/parity/webhookendpoint/add/")
    added = browser.post(
        f"{base}/admin/parity/webhookendpoint/add/",
        data={**new, "project": beta.pk, "csrfmiddlewaretoken": csrf},
        headers={"Referer": base},
        timeout=30,
    )
    assert added.status_code == 200 and "Select a valid choice" in added.text
    assert WebhookEndpoint.objects.filter(project=beta).count() == 1
    assert WebhookEndpoint.objects.get(project=beta).url == "https://beta.example.org/hook"
