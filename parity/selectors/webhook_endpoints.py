"""A project's webhook endpoints and their recent deliveries, for the project's webhooks page
(its maintainers only; docs/webhooks.md). Nothing here reads an endpoint's secret: a page that
lists endpoints cannot show it by mistake."""

from dataclasses import dataclass
from urllib.parse import urlsplit

from django.db.models import Prefetch

from parity.models import Project, WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookFormat

DELIVERIES_SHOWN = 10


@dataclass(frozen=True)
class DeliveryRow:
    id: int
    event: str
    created_at: object
    status: str
    attempts: int
    status_code: int | None  # the last attempt's HTTP status; None: no answer, or no attempt
    error: str  # the last attempt's error


@dataclass(frozen=True)
class EndpointRow:
    id: int
    url_shown: str
    format: str
    events: list[str]
    active: bool
    created_at: object
    deliveries: list[DeliveryRow]


def url_shown(url: str, format: str) -> str:
    """The URL as a page shows it: a Slack incoming webhook's path is its credential, so only
    its host and last four characters are shown."""
    if format != WebhookFormat.SLACK:
        return url
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/…{url[-4:]}" if len(url) > 8 else "…"


def _delivery(delivery: WebhookDelivery) -> DeliveryRow:
    last = delivery.last_attempts[0] if delivery.last_attempts else None
    return DeliveryRow(
        id=delivery.pk,
        event=delivery.notice.event,
        created_at=delivery.created_at,
        status=delivery.status,
        attempts=delivery.attempts,
        status_code=last.status_code if last else None,
        error=last.error if last else "",
    )


def webhook_endpoints_of(*, project: Project) -> list[EndpointRow]:
    """``project``'s endpoints, oldest first, each with its latest deliveries (newest first)."""
    last_attempt = Prefetch(
        "log", queryset=WebhookAttempt.objects.order_by("-number")[:1], to_attr="last_attempts"
    )
    recent = (
        WebhookDelivery.objects.select_related("notice")
        .prefetch_related(last_attempt)
        .order_by("-created_at", "-pk")[:DELIVERIES_SHOWN]
    )
    endpoints = (
        WebhookEndpoint.objects.filter(project=project)
        .defer("secret")
        .order_by("pk")
        .prefetch_related(Prefetch("deliveries", queryset=recent, to_attr="recent"))
    )
    return [
        EndpointRow(
            id=e.pk,
            url_shown=url_shown(e.url, e.format),
            format=e.format,
            events=list(e.events),
            active=e.active,
            created_at=e.created_at,
            deliveries=[_delivery(d) for d in e.recent],
        )
        for e in endpoints
    ]


def webhook_endpoint_of(*, project: Project, pk: int) -> WebhookEndpoint | None:
    """``project``'s endpoint ``pk`` (None: none, or another project's)."""
    return WebhookEndpoint.objects.filter(project=project, pk=pk).select_related("project").first()
