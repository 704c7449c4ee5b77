"""A project's webhook endpoints, written by its maintainers (the project's webhooks page and the
admin, both scoped to the projects the user maintains; docs/webhooks.md).

Every write validates the whole row (``full_clean``), so the model's own checks (the URL's,
the egress policy's) apply whichever page saved it. The secret is returned by the write that
makes it (creation, a new secret) and never read back for display afterwards.
"""

import logging
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from parity.models import (
    Project,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookFormat,
    WebhookNotice,
)
from parity.models.webhooks import secret_new
from parity.tasks import deliveries_queue

logger = logging.getLogger(__name__)

# What an endpoint may subscribe to: every event but the test event, which is sent on request.
SUBSCRIBABLE = [
    (value, label) for value, label in WebhookEvent.choices if value != WebhookEvent.PING
]


class EndpointRejected(ValueError):
    """An endpoint the rules refuse; ``errors`` maps a field (or ``None``) to its messages."""

    def __init__(self, errors: dict[str | None, list[str]]):
        self.errors = errors
        super().__init__("; ".join(m for messages in errors.values() for m in messages))


@dataclass(frozen=True)
class EndpointRequest:
    url: str
    format: str = WebhookFormat.JSON
    events: tuple[str, ...] = ()  # none: every event
    active: bool = True


def _validated(endpoint: WebhookEndpoint, request: EndpointRequest) -> None:
    known = {value for value, _ in SUBSCRIBABLE}
    unknown = [event for event in request.events if event not in known]
    if unknown:
        raise EndpointRejected({"events": [f"Unknown event(s): {', '.join(unknown)}."]})
    endpoint.url = request.url.strip()
    endpoint.format = request.format
    endpoint.events = list(dict.fromkeys(request.events))
    endpoint.active = request.active
    try:
        endpoint.full_clean()
    except ValidationError as exc:
        errors = getattr(exc, "error_dict", None)
        if errors is None:
            raise EndpointRejected({None: exc.messages}) from None
        raise EndpointRejected(
            {(None if f == "__all__" else f): exc.message_dict[f] for f in errors}
        ) from None


def webhook_endpoint_check(*, project: Project, request: EndpointRequest) -> None:
    """Raise ``EndpointRejected`` if ``project`` could not have an endpoint as ``request`` says
    (for a form that shows the errors before anything is written)."""
    _validated(WebhookEndpoint(project=project), request)


def webhook_endpoint_create(
    *, project: Project, request: EndpointRequest, secret: str = ""
) -> tuple[WebhookEndpoint, str]:
    """A new endpoint of ``project`` and its secret (``secret``, or one generated), to show its
    maker once; raises ``EndpointRejected``."""
    endpoint = WebhookEndpoint(project=project, secret=secret.strip() or secret_new())
    _validated(endpoint, request)
    plain = endpoint.secret
    endpoint.save()
    logger.info("webhook endpoint %s of project %s created", endpoint.pk, project.slug)
    return endpoint, plain


def webhook_endpoint_update(*, endpoint: WebhookEndpoint, request: EndpointRequest) -> None:
    """Change where and what ``endpoint`` receives; its secret stays. Raises
    ``EndpointRejected``."""
    _validated(endpoint, request)
    endpoint.save(update_fields=["url", "format", "events", "active"])
    logger.info("webhook endpoint %s changed", endpoint.pk)


def webhook_endpoint_secret_renew(*, endpoint: WebhookEndpoint) -> str:
    """A new secret for ``endpoint`` (the old one stops signing at once), to show once."""
    endpoint.secret = secret_new()
    endpoint.save(update_fields=["secret"])
    logger.info("webhook endpoint %s: new secret", endpoint.pk)
    return endpoint.secret


def webhook_endpoint_delete(*, endpoint: WebhookEndpoint) -> None:
    """Remove ``endpoint`` with its deliveries and their log."""
    pk = endpoint.pk
    endpoint.delete()
    logger.info("webhook endpoint %s deleted", pk)


def webhook_endpoint_ping(*, endpoint: WebhookEndpoint) -> WebhookDelivery:
    """Send ``endpoint`` a test event (``ping``), whatever it subscribes to and even paused: one
    delivery, logged and retried like any other, queued once recorded."""
    project = endpoint.project
    title = f"{project.slug}: a test event from parity"
    with transaction.atomic():
        notice = WebhookNotice.objects.create(
            project=project,
            event=WebhookEvent.PING,
            payload={"endpoint": endpoint.pk},
            summary={"title": title, "url": "", "sections": []},
        )
        delivery = WebhookDelivery.objects.create(
            notice=notice, endpoint=endpoint, next_attempt_at=timezone.now()
        )
        deliveries_queue([delivery.pk])
    logger.info("webhook endpoint %s: test event, delivery %s", endpoint.pk, delivery.pk)
    return delivery
