"""The beat's task and the per-delivery send task, against a real SMTP server: exactly one
message per subscription and week, and one refused address does not stop the others."""

import asyncio
import threading

import pytest
from django.db import connection

from parity.digest.services import digest_deliver, subscription_subscribe
from parity.digest.tasks import digest_send, digest_weekly
from parity.models import DigestDelivery
from parity.services.projects import project_create
from tests.digest import scenario as s
from tests.digest.conftest import free_port

ADDRESSES = ["alice@example.com", "bob@example.com", "carol@example.com"]


@pytest.fixture
def subscribed(xla, upload_run) -> list[int]:
    s.upload_week13(upload_run)
    s.upload_week14(upload_run)
    return [subscription_subscribe(project=xla, email=a)[0].pk for a in ADDRESSES]


def test_the_weekly_task_twice_sends_one_message_per_subscription(subscribed, smtp):
    digest_weekly.delay(week=str(s.W14))
    digest_weekly.delay(week=str(s.W14))  # a second beat, or a redelivered one
    for delivery in DigestDelivery.objects.all():
        digest_send.delay(delivery.pk)  # a retried send task

    assert sorted(r.rcpt_tos[0] for r in smtp.received) == ADDRESSES
    deliveries = DigestDelivery.objects.order_by("subscription__email")
    assert [(d.email, d.status, d.attempts) for d in deliveries] == [
        (a, "sent", 1) for a in ADDRESSES
    ]
    assert all(d.sent_at and d.message_id.startswith("<digest.") for d in deliveries)


def test_a_refused_recipient_does_not_block_the_others_and_is_retried(
    subscribed, smtp, eager_errors_swallowed
):
    smtp.refuse.add("bob@example.com")

    digest_weekly.delay(week=str(s.W14))

    assert [r.rcpt_tos for r in smtp.received] == [["alice@example.com"], ["carol@example.com"]]
    bob = DigestDelivery.objects.get(subscription__email="bob@example.com")
    assert bob.status == "failed" and bob.sent_at is None
    assert bob.detail.startswith("SMTPRecipientsRefused: ") and "550" in bob.detail
    # Eager Celery runs the retries at once: the first attempt and every retry were refused.
    assert bob.attempts == digest_send.max_retries + 1

    smtp.refuse.clear()  # the mailbox is back; the next beat of the week retries it
    digest_weekly.delay(week=str(s.W14))

    assert [r.rcpt_tos for r in smtp.received][2:] == [["bob@example.com"]]
    bob.refresh_from_db()
    assert (bob.status, bob.detail) == ("sent", "")


def test_an_unreachable_server_fails_the_delivery_without_losing_it(
    subscribed, settings, eager_errors_swallowed
):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", free_port()  # nothing listens

    digest_weekly.delay(week=str(s.W14))

    assert set(DigestDelivery.objects.values_list("status", flat=True)) == {"failed"}
    details = DigestDelivery.objects.values_list("detail", flat=True)
    assert all(d.startswith("ConnectionRefusedError: ") for d in details)


@pytest.mark.django_db(transaction=True)
def test_two_workers_sending_one_delivery_send_it_once(smtp):
    """The row lock: a duplicate send task waits for the first and finds the row sent."""
    project = project_create(slug="jax", backends=["cpu", "tpu"], reference="cpu")
    subscription, _ = subscription_subscribe(project=project, email="dana@example.com")
    delivery = DigestDelivery.objects.create(subscription=subscription, week=s.W14.monday)
    in_data, release = threading.Event(), threading.Event()
    accept = smtp.handle_DATA

    async def slow_data(server, session, envelope):
        in_data.set()
        while not release.is_set():  # the first worker now holds the row lock
            await asyncio.sleep(0.01)
        return await accept(server, session, envelope)

    smtp.handle_DATA = slow_data
    results = {}

    def worker(name: str) -> None:
        try:
            results[name] = digest_deliver(delivery_id=delivery.pk)
        finally:
            connection.close()

    first = threading.Thread(target=worker, args=("first",))
    first.start()
    assert in_data.wait(10)
    second = threading.Thread(target=worker, args=("second",))
    second.start()
    second.join(0.3)
    assert second.is_alive()  # blocked on the row lock, not sending
    release.set()
    first.join(10)
    second.join(10)

    assert results == {"first": "sent", "second": "sent"}
    assert [r.rcpt_tos for r in smtp.received] == [["dana@example.com"]]
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("sent", 1)


def test_the_beat_sends_on_monday_at_eight_utc_by_default(settings):
    from parity.settings.base import _digest_crontab

    schedule = settings.CELERY_BEAT_SCHEDULE["parity-digest-weekly"]
    assert schedule["task"] == digest_weekly.name == "parity.digest.tasks.digest_weekly"
    cron = schedule["schedule"]
    assert (cron.minute, cron.hour, cron.day_of_week) == ({0}, {8}, {1})
    friday = _digest_crontab("30 17 * * fri")  # PARITY_DIGEST_CRON
    assert (friday.minute, friday.hour, friday.day_of_week) == ({30}, {17}, {5})
