"""Webhooks: a project's endpoints, the events parity announced, and each delivery's attempts.

An event is written once (``WebhookEvent``), then one ``WebhookDelivery`` per endpoint that
subscribes to it, whose ``WebhookAttempt`` rows are the delivery log (docs/webhooks.md).
"""

import secrets

from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator, URLValidator
from django.db import models
from django.db.models import Q

from parity import outbound
from parity.models.fields import EncryptedTextField

URL_MAX_CHARS = 500


def secret_new() -> str:
    return secrets.token_urlsafe(32)


class WebhookEvent(models.TextChoices):
    UNTRACKED_GAPS = "untracked_gaps", "untracked gaps opened or closed"
    COVERAGE_DROP = "coverage_drop", "coverage drop"
    EXEMPTION_EXPIRING = "exemption_expiring", "exemption expiring soon"
    EXEMPTION_PASSES_NOW = "exemption_passes_now", "exemption passes now"
    DIGEST_READY = "digest_ready", "weekly digest ready"
    PING = "ping", "test event (sent on request)"
    TRANSITION = "transition", "version transition"
    TARGET_AT_RISK = "target_at_risk", "target at risk"
    FLAKY_TESTS = "flaky_tests", "tests entered or left flaky"
    SUITE_TIER_CHANGED = "suite_tier_changed", "suite tier changed"


class WebhookFormat(models.TextChoices):
    JSON = "json", "signed JSON"
    SLACK = "slack", "Slack incoming webhook"


class WebhookEndpoint(models.Model):
    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="webhooks")
    # Encrypted like the secret: a Slack incoming webhook's URL is its credential (and a JSON
    # receiver's may carry a token). Validated as the URLField it was.
    url = EncryptedTextField(validators=[URLValidator(), MaxLengthValidator(URL_MAX_CHARS)])
    # Encrypted, not hashed: every delivery is signed with it. Read, it is the plain secret, or
    # ``Unreadable`` when no key in use decrypts it (parity.models.fields).
    secret = EncryptedTextField(default=secret_new)
    events = models.JSONField(
        default=list, blank=True, help_text="Events it receives (WebhookEvent); empty: all."
    )
    format = models.CharField(
        max_length=10, choices=WebhookFormat.choices, default=WebhookFormat.JSON
    )
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "pk"]

    def __str__(self) -> str:
        # Its host only, wherever it is printed (the admin, logs): a Slack URL's path is its secret.
        return f"{outbound.url_shown(str(self.url or ''))} ({self.format})"

    def subscribes(self, event: str) -> bool:
        return not self.events or event in self.events

    def clean(self) -> None:
        """A URL the egress policy refuses (an internal address, a scheme other than http(s))
        is refused here, saying why and which setting allows it: every form and service that
        validates an endpoint (``full_clean``) says so before anything is sent."""
        super().clean()
        refusal = outbound.url_refusal(str(self.url or ""))
        if refusal:
            raise ValidationError({"url": refusal})


class WebhookNotice(models.Model):
    """One event, as parity announced it: ``payload`` is the JSON body's ``data``, ``summary``
    the title, link and lists a chat message shows. ``key`` makes a once-only event (a
    coverage drop of a run, a digest's week) unique; ``subjects`` are the ids it announced
    (gaps, exemptions), so a later event of the same cause leaves them out."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="+")
    event = models.CharField(max_length=30, choices=WebhookEvent.choices)
    key = models.CharField(max_length=200, blank=True, default="")
    payload = models.JSONField(default=dict)
    summary = models.JSONField(default=dict)
    subjects = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "key"], condition=~Q(key=""), name="webhooknotice_key"
            )
        ]
        indexes = [models.Index(fields=["project", "event"], name="webhooknotice_event")]

    def __str__(self) -> str:
        return f"{self.event} #{self.pk}"


class WebhookDeliveryStatus(models.TextChoices):
    PENDING = "pending"  # not attempted yet, or waiting for its next attempt
    DELIVERED = "delivered"  # a 2xx answer
    FAILED = "failed"  # out of attempts, or refused for good (a 4xx other than 408/429)


class WebhookDelivery(models.Model):
    """One event to one endpoint: its state, and when the next attempt is due."""

    notice = models.ForeignKey(WebhookNotice, on_delete=models.CASCADE, related_name="deliveries")
    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    status = models.CharField(
        max_length=10,
        choices=WebhookDeliveryStatus.choices,
        default=WebhookDeliveryStatus.PENDING,
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField()
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "webhook deliveries"
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["notice", "endpoint"], name="webhookdelivery_unique")
        ]
        indexes = [
            models.Index(
                fields=["next_attempt_at"],
                condition=Q(status="pending"),
                name="webhookdelivery_due",
            )
        ]

    def __str__(self) -> str:
        return f"delivery {self.pk} of {self.notice_id} to {self.endpoint_id}: {self.status}"


class WebhookAttempt(models.Model):
    """The delivery log: one row per HTTP attempt."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="log")
    number = models.PositiveSmallIntegerField()
    at = models.DateTimeField()
    body_sha256 = models.CharField(max_length=64, help_text="Digest of the exact body sent.")
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    seconds = models.FloatField(default=0)
    next_retry_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["delivery", "number"], name="webhookattempt_unique")
        ]

    def __str__(self) -> str:
        return f"attempt {self.number} of delivery {self.delivery_id}: {self.status_code}"
