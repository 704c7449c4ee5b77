"""A project's targets: a score to reach on a backend by a date (docs/targets.md)."""

import datetime

from django.conf import settings
from django.db import models


class Target(models.Model):
    """A score (a share, by the project's definition) to reach on ``backend`` by ``due``.
    ``denominator`` is the score's whole when the target was set (the expected set, counted), so
    tests added later do not move the goal (``parity.pure.forecasts``). ``at_risk`` is the state
    the last assessment left, kept so that it changes with hysteresis, not at every run."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="targets")
    backend = models.ForeignKey("Backend", on_delete=models.CASCADE, related_name="+")
    score = models.FloatField(help_text="The share to reach, 0 to 1, by the project's definition.")
    due = models.DateField()
    denominator = models.PositiveIntegerField(help_text="The score's whole when it was set.")
    note = models.TextField(blank=True, default="")
    rate_weeks = models.PositiveSmallIntegerField(
        default=4, help_text="The forecast's rate is measured over this many recent weeks."
    )
    margin_days = models.PositiveSmallIntegerField(
        default=7, help_text="At risk until the forecast is this many days before the date."
    )
    at_risk = models.BooleanField(default=False)
    at_risk_since = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        ordering = ["project", "backend", "due", "pk"]

    def __str__(self) -> str:
        return f"{self.backend} {self.score:.0%} by {self.due}"

    @property
    def margin(self) -> datetime.timedelta:
        return datetime.timedelta(days=self.margin_days)
