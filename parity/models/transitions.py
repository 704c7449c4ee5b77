"""Version transitions: a backend's current run moved to a run whose attributes differ from the
run before it (ROCm 7.1 → 7.14, a framework's version). The engine records one when it happens
(``parity.engine.transitions``), with its counts; the tests of each kind are read from the two
runs' results when a page asks (``parity.result_reads.transitions``), docs/transitions.md."""

from django.db import models
from django.utils import timezone


class TransitionKind(models.TextChoices):
    """How a test moved between the two runs. Failed means failed or error; a skip, or an
    outcome that did not change, is none of them (``parity.definitions.transition_tests``)."""

    FAIL_TO_PASS = "fail_to_pass", "Fail→Pass"
    PASS_TO_FAIL = "pass_to_fail", "Pass→Fail"
    NEW = "new", "New"
    GONE = "gone", "Gone"


class Transition(models.Model):
    """``to_run`` became ``backend``'s current run after ``from_run`` and carries other
    attributes: ``changed`` is ``{key: [before, after]}`` (None where a run lacks the key).
    The counts are of ``TransitionKind``, as at the change; ``lapses`` lists the conditioned
    exemptions naming the backend whose condition stopped or started holding there, each
    ``{"triage", "match", "condition", "before", "after"}`` (whether it held)."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="transitions")
    backend = models.ForeignKey("Backend", on_delete=models.CASCADE, related_name="+")
    from_run = models.ForeignKey("Run", on_delete=models.CASCADE, related_name="+")
    to_run = models.OneToOneField("Run", on_delete=models.CASCADE, related_name="transition")
    changed = models.JSONField(default=dict)
    fail_to_pass = models.PositiveIntegerField(default=0)
    pass_to_fail = models.PositiveIntegerField(default=0)
    new = models.PositiveIntegerField(default=0)
    gone = models.PositiveIntegerField(default=0)
    lapses = models.JSONField(default=list, blank=True)
    at = models.DateTimeField(default=timezone.now, help_text="When CI ran to_run.")

    class Meta:
        ordering = ["-at", "-pk"]
        indexes = [models.Index(fields=["project", "-at", "-id"], name="transition_project_at")]

    def __str__(self) -> str:
        return f"{self.backend_id}: run {self.from_run_id} → {self.to_run_id}"

    @property
    def counts(self) -> dict[str, int]:
        return {kind.value: getattr(self, kind.value) for kind in TransitionKind}

    @property
    def changes(self) -> list[tuple[str, str | None, str | None]]:
        """``changed`` as (key, before, after), by key."""
        return [(key, pair[0], pair[1]) for key, pair in sorted(self.changed.items())]
