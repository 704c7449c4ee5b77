import pytest
from django.contrib.auth import get_user_model

from parity.digest.services import digest_week_plan, subscription_subscribe
from parity.models import Subscription
from parity.services.projects import project_create
from tests.digest import scenario as s


@pytest.fixture
def admin_client(client, db):
    user = get_user_model().objects.create_superuser("admin", "admin@example.com", "x" * 12)
    client.force_login(user)
    return client


def test_subscriptions_and_deliveries_are_listed(project, admin_client):
    subscription_subscribe(project=project, email="alice@example.com", backends=["tpu"])
    digest_week_plan(week=s.W14)

    page = admin_client.get("/admin/parity/subscription/")
    assert page.status_code == 200 and b"alice@example.com" in page.content
    page = admin_client.get("/admin/parity/digestdelivery/")
    assert page.status_code == 200 and b"pending" in page.content
    assert admin_client.get("/admin/parity/digestdelivery/add/").status_code == 403
    assert b"Digest deliveries" in admin_client.get("/admin/").content


def test_adding_a_subscription_checks_its_backends(project, admin_client):
    other = project_create(slug="jax", backends=["cpu", "tpu"], reference="cpu")
    foreign = other.backends.get(name="tpu")
    form = {"project": project.pk, "email": "Bob@Example.com", "active": "on"}

    page = admin_client.post("/admin/parity/subscription/add/", {**form, "backends": [foreign.pk]})
    assert page.status_code == 200 and b"Not backends of pytorch-xla: tpu." in page.content

    own = project.backends.get(name="tpu")
    page = admin_client.post("/admin/parity/subscription/add/", {**form, "backends": [own.pk]})
    assert page.status_code == 302
    subscription = Subscription.objects.get()
    assert subscription.email == "bob@example.com" and len(subscription.token) >= 40
    assert list(subscription.backends.all()) == [own]


def test_the_unsubscribe_action(project, admin_client):
    subscription, _ = subscription_subscribe(project=project, email="alice@example.com")
    page = admin_client.post(
        "/admin/parity/subscription/",
        {"action": "deactivate", "_selected_action": [subscription.pk]},
    )
    assert page.status_code == 302
    subscription.refresh_from_db()
    assert not subscription.active and subscription.unsubscribed_at is not None
