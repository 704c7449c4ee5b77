import pytest
from django.core import mail

from parity.digest.services import (
    SubscriptionRejected,
    digest_deliver,
    digest_week_plan,
    subscription_subscribe,
    subscription_unsubscribe,
)
from parity.models import DigestDelivery, Subscription
from tests.digest import scenario as s


def test_subscribe_normalizes_and_filters(project):
    subscription, created = subscription_subscribe(
        project=project, email="  Alice@Example.COM ", backends=["tpu", "neuron"]
    )

    assert created and subscription.email == "alice@example.com" and subscription.active
    assert sorted(subscription.backends.values_list("name", flat=True)) == ["neuron", "tpu"]
    assert len(subscription.token) >= 40


def test_subscribing_again_reactivates_and_refilters(project):
    first, _ = subscription_subscribe(project=project, email="alice@example.com", backends=["tpu"])
    subscription_unsubscribe(subscription=first)
    assert first.unsubscribed_at is not None

    again, created = subscription_subscribe(project=project, email="ALICE@example.com")

    assert (again.pk, created, again.active, again.unsubscribed_at) == (first.pk, False, True, None)
    assert list(again.backends.all()) == []  # every backend now
    assert again.token == first.token  # old digests' links still work


@pytest.mark.parametrize(
    ("email", "backends", "message"),
    [
        ("not an address", [], "'not an address' is not an email address."),
        ("a@example.com", ["tpu", "cuda"], "has no backend cuda (it has cpu, gpu, neuron, tpu)"),
    ],
)
def test_subscribe_rejects(project, email, backends, message):
    with pytest.raises(SubscriptionRejected, match=message.replace("(", r"\(").replace(")", r"\)")):
        subscription_subscribe(project=project, email=email, backends=backends)
    assert not Subscription.objects.exists()


def test_the_plan_covers_active_subscriptions_only(project):
    active, _ = subscription_subscribe(project=project, email="a@example.com")
    gone, _ = subscription_subscribe(project=project, email="b@example.com")
    subscription_unsubscribe(subscription=gone)

    ids = digest_week_plan(week=s.W14)

    assert list(DigestDelivery.objects.values_list("pk", "subscription_id")) == [
        (ids[0], active.pk)
    ]


def test_unsubscribing_after_the_plan_skips_the_delivery(project):
    subscription, _ = subscription_subscribe(project=project, email="a@example.com")
    (delivery_id,) = digest_week_plan(week=s.W14)
    subscription_unsubscribe(subscription=subscription)

    assert digest_deliver(delivery_id=delivery_id) == "skipped"
    assert mail.outbox == []
    assert DigestDelivery.objects.get().detail == "unsubscribed"


def test_a_quiet_week_is_skipped_when_configured(project, settings):
    settings.PARITY_DIGEST_SKIP_QUIET = True
    subscription_subscribe(project=project, email="a@example.com")
    (delivery_id,) = digest_week_plan(week=s.W14)

    assert digest_deliver(delivery_id=delivery_id) == "skipped"
    assert mail.outbox == []
    assert digest_week_plan(week=s.W14) == []  # skipped is final: nothing left to send


def test_a_quiet_week_is_sent_by_default(project):
    subscription_subscribe(project=project, email="a@example.com")
    (delivery_id,) = digest_week_plan(week=s.W14)

    assert digest_deliver(delivery_id=delivery_id) == "sent"
    (message,) = mail.outbox
    assert message.subject == "[parity] pytorch-xla 2026-W14: quiet week"
    assert "Quiet week: no gaps opened or fixed" in message.body
