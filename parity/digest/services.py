"""Writes of the weekly digest: subscriptions, the week's delivery plan, and sending one
delivery exactly once."""

import datetime
import logging
import smtplib
from email.utils import parseaddr

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import EmailMultiAlternatives
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone

from parity.digest.links import unsubscribe_url
from parity.digest.render import digest_message, digest_render
from parity.models import (
    DeliveryStatus,
    DigestDelivery,
    Project,
    ReasonLinksRecord,
    Subscription,
)
from parity.pure.codeowners import is_owner
from parity.pure.weeks import Week
from parity.result_reads.week_uncovered import week_uncovered
from parity.selectors.digest import digest_content
from parity.selectors.owners import owner_clean
from parity.selectors.reason_links import reason_links_now

logger = logging.getLogger(__name__)

# What a refused recipient, a dropped connection or an unreachable server raise.
SMTP_ERRORS = (smtplib.SMTPException, OSError)
FINAL = (DeliveryStatus.SENT, DeliveryStatus.SKIPPED)


class SubscriptionRejected(ValueError):
    """A bad address or a backend the project does not have; str() says which."""


class WeekNotOver(ValueError):
    """A digest is sent once per week: not before the week has ended."""


class DigestSendFailed(Exception):
    """The SMTP server did not accept a delivery; it is marked failed and may be retried."""


def subscription_subscribe(
    *, project: Project, email: str, backends: list[str] | None = None, owner: str = ""
) -> tuple[Subscription, bool]:
    """Subscribe ``email`` to the project's digest, or reactivate and refilter its
    subscription; with ``owner``, to that code owner's gaps only ("my gaps"). Returns the
    subscription and whether it is new."""
    email = email.strip().lower()
    try:
        validate_email(email)
    except ValidationError as exc:
        raise SubscriptionRejected(f"'{email}' is not an email address.") from exc
    owner = owner_clean(owner)
    if owner and not is_owner(owner):
        raise SubscriptionRejected(f"'{owner}' is not a code owner (@user, @org/team or an email).")
    known = {b.name: b for b in project.backends.all()}
    unknown = sorted(set(backends or []) - known.keys())
    if unknown:
        raise SubscriptionRejected(
            f"Project '{project.slug}' has no backend {', '.join(unknown)} "
            f"(it has {', '.join(sorted(known))})."
        )
    with transaction.atomic():
        subscription, created = Subscription.objects.get_or_create(project=project, email=email)
        if not subscription.active:
            subscription.active, subscription.unsubscribed_at = True, None
            subscription.save(update_fields=["active", "unsubscribed_at"])
        subscription.backends.set([known[name] for name in backends or []])
        if subscription.owner != owner:
            subscription.owner = owner
            subscription.save(update_fields=["owner"])
    logger.info("subscription %s of project %s (new: %s)", subscription.pk, project.pk, created)
    return subscription, created


def subscription_unsubscribe(*, subscription: Subscription) -> None:
    """Stop the digest; a delivery not yet sent is skipped. Unsubscribing twice is a no-op."""
    updated = Subscription.objects.filter(pk=subscription.pk, active=True).update(
        active=False, unsubscribed_at=timezone.now()
    )
    if updated:
        logger.info("subscription %s unsubscribed", subscription.pk)
    subscription.refresh_from_db()


def reason_links_record(*, project: Project, week: Week) -> bool:
    """Record the project's reason issue links as those at the start of ``week``, once. Returns
    whether it recorded them.

    Called when the previous week's digest goes out, so on Monday morning. Not when a later
    week is already recorded (a digest of an old week sent on demand), where the links now
    are not those of ``week``'s start. One inexactness is left: the first digest ever, sent on
    demand for an old week, records the links now as that week's."""
    if ReasonLinksRecord.objects.filter(project=project, week__gte=week.monday).exists():
        return False
    _, created = ReasonLinksRecord.objects.get_or_create(
        project=project,
        week=week.monday,
        defaults={"links": reason_links_now(project_id=project.pk)},
    )
    return created


def digest_week_plan(
    *, week: Week, project: Project | None = None, now: datetime.datetime | None = None
) -> list[int]:
    """Plan the digest of ``week``: record the issue links the next digest starts from, create
    a pending delivery for every active subscription (of ``project``, or of all), and return
    the ids of those not sent or skipped yet, oldest first. Run twice, it creates nothing new
    and returns only what is left to send. A week not over yet is refused: its digest would
    take the week's one delivery with half the week in it."""
    now = now or timezone.now()
    if week.end > now:
        raise WeekNotOver(f"Week {week} has not ended yet (it ends {week.end:%Y-%m-%d %H:%M} UTC).")
    subscriptions = Subscription.objects.filter(active=True)
    projects = Project.objects.all()
    if project is not None:
        subscriptions, projects = subscriptions.filter(project=project), [project]
    with transaction.atomic():
        for each in projects:
            reason_links_record(project=each, week=week.next)
        DigestDelivery.objects.bulk_create(
            [DigestDelivery(subscription=s, week=week.monday) for s in subscriptions],
            ignore_conflicts=True,  # the unique (subscription, week): planned already
        )
    pending = DigestDelivery.objects.filter(
        week=week.monday, subscription__in=subscriptions
    ).exclude(status__in=FINAL)
    return list(pending.order_by("pk").values_list("pk", flat=True))


def digest_deliver(*, delivery_id: int) -> str:
    """Send one delivery unless it was sent or skipped already; returns its status.

    Exactly once: the delivery row is locked (``SELECT … FOR UPDATE``) for the whole attempt,
    so a duplicate task (a retry, a second beat, ``send_digest``) waits for it and then finds
    it sent. It is marked sent only after the SMTP server accepted the message, in the same
    transaction. The one window left: the server accepts, then the worker dies or the commit
    fails before the row says so; the row stays pending and the redelivered task sends again.
    The Message-ID is the same on both, so mail clients that deduplicate show it once.

    An SMTP failure marks the row failed (committed) and raises ``DigestSendFailed`` for the
    task to retry; it never touches other deliveries."""
    failure: Exception | None = None
    with transaction.atomic():
        delivery = (
            DigestDelivery.objects.select_for_update(of=("self",))
            .select_related("subscription__project")
            .filter(pk=delivery_id)
            .first()
        )
        if delivery is None or delivery.status in FINAL:
            return delivery.status if delivery else DeliveryStatus.SKIPPED
        message = _message(delivery)
        if isinstance(message, str):
            return _skip(delivery, message)
        delivery.attempts += 1
        try:
            message.send()
        except SMTP_ERRORS as exc:
            failure = exc
            delivery.status = DeliveryStatus.FAILED
            delivery.detail = f"{type(exc).__name__}: {exc}"
        else:
            delivery.status, delivery.detail = DeliveryStatus.SENT, ""
            delivery.sent_at = timezone.now()
        delivery.save()
    if failure is not None:
        logger.warning("digest delivery %s failed: %s", delivery.pk, delivery.detail)
        raise DigestSendFailed(f"delivery {delivery.pk}: {delivery.detail}") from failure
    logger.info("digest delivery %s sent to subscription %s", delivery.pk, delivery.subscription_id)
    return delivery.status


def _message(delivery: DigestDelivery) -> EmailMultiAlternatives | str:
    """The delivery's email (and its row filled in), or why there is nothing to send."""
    subscription = delivery.subscription
    if not subscription.active:
        return "unsubscribed"
    week = Week.of(delivery.week)
    backends = list(subscription.backends.values_list("name", flat=True))
    content = digest_content(
        project=subscription.project,
        week=week,
        backends=backends,
        owner=subscription.owner,
        uncovered=week_uncovered(project=subscription.project, week=week),
    )
    if content.quiet and settings.PARITY_DIGEST_SKIP_QUIET:
        return "quiet week"
    link = unsubscribe_url(token=subscription.token)
    rendered = digest_render(content, unsubscribe_url=link)
    delivery.email, delivery.subject = subscription.email, rendered.subject
    delivery.message_id = _message_id(delivery, week)
    return digest_message(
        rendered, to=subscription.email, unsubscribe_url=link, message_id=delivery.message_id
    )


def _skip(delivery: DigestDelivery, why: str) -> str:
    delivery.status, delivery.detail = DeliveryStatus.SKIPPED, why
    delivery.save(update_fields=["status", "detail", "updated_at"])
    logger.info("digest delivery %s skipped: %s", delivery.pk, why)
    return delivery.status


def _message_id(delivery: DigestDelivery, week: Week) -> str:
    # Stable per delivery: a resend from the window above carries the same Message-ID.
    domain = parseaddr(settings.DEFAULT_FROM_EMAIL)[1].rpartition("@")[2] or "localhost"
    return f"<digest.{delivery.pk}.{week}@{domain}>"
