from django.conf import settings
from django.db import models


class RekeyStatus(models.TextChoices):
    """Forward only: planning → planned → running → done, or failed from any of them."""

    PLANNING = "planning"
    PLANNED = "planned"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class Rekey(models.Model):
    """New identity rules for a project and what they do to its stored tests: planned first
    (``plan``: how many tests change key, how many merge, examples), run once a maintainer has
    read the plan (``summary``). Written by ``ingest.rekey``; the rules become the project's only
    when it runs."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="rekeys")
    rules = models.JSONField(help_text="The rules the stored tests are re-keyed under.")
    rules_before = models.JSONField(help_text="The project's rules when the plan was made.")
    status = models.CharField(
        max_length=10, choices=RekeyStatus.choices, default=RekeyStatus.PLANNING
    )
    plan = models.JSONField(default=dict, blank=True)
    summary = models.JSONField(default=dict, blank=True)
    message = models.TextField(blank=True, help_text="Why it failed.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "re-key"

    def __str__(self) -> str:
        return f"re-key {self.pk} of {self.project_id}: {self.status}"
