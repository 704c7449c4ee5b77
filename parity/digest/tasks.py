"""Celery adapters of the weekly digest: the beat's fan-out, and one task per delivery."""

from urllib.parse import urlencode

from celery import shared_task
from django.db import DatabaseError
from django.urls import reverse
from django.utils import timezone

from parity.celery import RETRY_ON_DATABASE_ERRORS
from parity.digest import services
from parity.digest.links import absolute
from parity.models import Project, WebhookEndpoint
from parity.pure.weeks import Week
from parity.services import webhooks
from parity.tasks import deliveries_queue


@shared_task(**RETRY_ON_DATABASE_ERRORS)
def digest_weekly(week: str | None = None) -> None:
    """Beat: plan the digest of ``week`` (default: the last week that has ended) and queue a
    send per delivery. A second run (a redelivery, a second beat) queues only what is not sent
    yet, and those sends find their rows sent if the first ones got there first."""
    target = Week.parse(week) if week else Week.last_complete(timezone.now())
    # The plan's transaction has committed here, so every queued id exists for the worker.
    for delivery_id in services.digest_week_plan(week=target):
        digest_send.delay(delivery_id)
    digest_ready_announce(target)


def digest_ready_announce(week: Week) -> None:
    """The digest_ready webhook of each project with an endpoint: once per project and week."""
    hooked = WebhookEndpoint.objects.filter(active=True).values_list("project_id", flat=True)
    for project in Project.objects.filter(pk__in=hooked).order_by("pk"):
        path = reverse("digest-preview", kwargs={"slug": project.slug})
        preview = absolute(f"{path}?{urlencode({'week': str(week)})}")
        deliveries_queue(
            webhooks.notice_digest_ready(project=project, week=str(week), preview_url=preview)
        )


# acks_late with the global reject_on_worker_lost: a worker that dies mid-send redelivers the
# task, and the delivery row (still pending, its transaction rolled back) is sent again. SMTP
# errors retry with backoff (a refused address too: the refusal may be temporary); after the
# last retry the row stays failed, for the admin to see and `send_digest --week` to retry.
@shared_task(
    acks_late=True,
    autoretry_for=(services.DigestSendFailed, DatabaseError),
    retry_backoff=60,
    retry_backoff_max=60 * 60,
    retry_jitter=True,
    max_retries=5,
)
def digest_send(delivery_id: int) -> None:
    """Adapter: send one delivery (no-op once it is sent or skipped)."""
    services.digest_deliver(delivery_id=delivery_id)
