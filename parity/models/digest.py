"""The weekly email digest (``parity/digest/``): who gets it, and what was sent to whom.

A ``DigestDelivery`` row per subscription and ISO week is what makes sending exactly-once: the
send task locks it, sends, and marks it sent in one transaction
(``parity.digest.services.digest_deliver``).
"""

import secrets

from django.db import models


def unsubscribe_token() -> str:
    return secrets.token_urlsafe(32)


class Subscription(models.Model):
    """An address that gets a project's weekly digest, optionally only for some backends, or
    only for one code owner's test files."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="subscriptions")
    email = models.EmailField(max_length=254)
    backends = models.ManyToManyField(
        "Backend",
        blank=True,
        related_name="+",
        help_text="Only these backends' scores, gaps and reasons; none selected: every backend.",
    )
    owner = models.CharField(
        max_length=200,
        blank=True,
        help_text="Only the gaps of this code owner's test files (@user, @org/team or an email, "
        "as the project's CODEOWNERS names it): 'my gaps'. Blank: the whole project.",
    )
    active = models.BooleanField(default=True)
    # The secret of the one-click unsubscribe link. Stored as is, unlike upload tokens: every
    # digest must put it in a link, and all it can do is stop this one subscription.
    token = models.CharField(max_length=64, unique=True, default=unsubscribe_token, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    unsubscribed_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["project", "email"]
        constraints = [
            models.UniqueConstraint(fields=["project", "email"], name="subscription_unique_email")
        ]

    def __str__(self) -> str:
        return f"{self.email} ({self.project_id})"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending"  # planned, or being sent right now (its row is locked then)
    SENT = "sent"  # the SMTP server accepted it: never again
    FAILED = "failed"  # the last attempt failed; retried
    SKIPPED = "skipped"  # nothing to send: a quiet week with skipping on, or unsubscribed


class DigestDelivery(models.Model):
    """One subscription's digest of one ISO week. Unique per (subscription, week), so a retried
    task or a second beat finds the row and does not send twice."""

    subscription = models.ForeignKey(
        Subscription, on_delete=models.CASCADE, related_name="deliveries"
    )
    week = models.DateField(help_text="The Monday (UTC) the ISO week starts.")
    status = models.CharField(
        max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    email = models.EmailField(max_length=254, blank=True, help_text="Where it was sent.")
    subject = models.CharField(max_length=300, blank=True)
    message_id = models.CharField(max_length=200, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    detail = models.TextField(blank=True, help_text="Why it failed or was skipped.")
    sent_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "digest deliveries"
        ordering = ["-week", "subscription"]
        constraints = [
            models.UniqueConstraint(
                fields=["subscription", "week"], name="digestdelivery_unique_week"
            )
        ]
        indexes = [models.Index(fields=["week", "status"], name="digestdelivery_week_status")]

    def __str__(self) -> str:
        return f"digest of {self.week} to subscription {self.subscription_id}: {self.status}"


class ReasonLinksRecord(models.Model):
    """The issue links of a project's reasons as recorded at the start of a week (when the
    previous week's digest went out). Reasons' links keep no history of their own, so "reasons
    that gained or lost an issue link this week" compares two of these."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="+")
    week = models.DateField(help_text="The Monday (UTC) of the week it opens.")
    links = models.JSONField(default=dict, help_text='{"<reason id>": {"<issue key>": "<url>"}}')
    recorded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "week"]
        constraints = [
            models.UniqueConstraint(fields=["project", "week"], name="reasonlinksrecord_unique")
        ]

    def __str__(self) -> str:
        return f"issue links of project {self.project_id} at {self.week}"
