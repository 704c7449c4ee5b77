"""Suites: the CI jobs a project's uploads come from, mapped across backends (docs/suites.md).

An upload names its suite (``Upload.suite``, as CI calls it on its backend); a ``Suite`` is one
logical suite of the project, and its ``SuiteBackend`` rows (the mirror map) say what each
backend calls it, or that the backend does not run it, why, and the issue that says so. A suite
name no map row claims is a logical suite of its own, under the name CI sent."""

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from parity.models.links import validate_web_url

SUITE_NAME_CHARS = 200
# A suite that ran less recently than this is stale, unless its map says otherwise: the demo's
# and most projects' suites run nightly, and a night's CI may start late.
STALE_AFTER_HOURS = 48


class Suite(models.Model):
    """One logical suite: its name on the page, and how often it is expected to run."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="suites")
    name = models.CharField(max_length=SUITE_NAME_CHARS)
    stale_after_hours = models.PositiveIntegerField(
        default=STALE_AFTER_HOURS,
        help_text="A backend's run of it older than this reads stale: no run in the interval "
        "the suite is expected to run in.",
    )
    # Its tier on each backend, from its runs there (parity.pure.suite_runs.TierRules).
    promote_after = models.PositiveSmallIntegerField(
        default=5, help_text="Greens in a row that make an informing suite blocking."
    )
    demote_after = models.PositiveSmallIntegerField(
        default=3, help_text="Reds in a row that make a suite broken."
    )
    recover_after = models.PositiveSmallIntegerField(
        default=3, help_text="Greens in a row that make a broken suite informing again."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="suite_unique_name"),
            models.CheckConstraint(
                condition=models.Q(promote_after__gte=1, demote_after__gte=1, recover_after__gte=1),
                name="suite_tier_streaks_positive",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class SuiteBackend(models.Model):
    """The mirror map's row of one suite on one backend: the name CI gives it there, or its
    exclusion with a reason (and the issue that tracks it)."""

    suite = models.ForeignKey(Suite, on_delete=models.CASCADE, related_name="backends")
    backend = models.ForeignKey("Backend", on_delete=models.CASCADE, related_name="+")
    name = models.CharField(
        max_length=SUITE_NAME_CHARS,
        blank=True,
        help_text="What this backend's uploads call the suite; blank: the suite's own name.",
    )
    excluded = models.BooleanField(
        default=False, help_text="The backend does not run this suite, on purpose."
    )
    reason = models.TextField(blank=True, help_text="Why it is excluded (required then).")
    issue_url = models.URLField(
        max_length=500,
        blank=True,
        validators=[validate_web_url],
        help_text="The issue that tracks the exclusion.",
    )

    class Meta:
        ordering = ["suite", "backend"]
        constraints = [
            models.UniqueConstraint(fields=["suite", "backend"], name="suite_backend_unique"),
            models.CheckConstraint(
                condition=Q(excluded=False) | ~Q(reason=""), name="suite_excluded_has_reason"
            ),
            # The URL rule's database half (parity.models.links.WEB_URL_OR_EMPTY), on this field.
            models.CheckConstraint(
                condition=Q(issue_url="")
                | (
                    Q(issue_url__iregex=r"^https?://[^/?#[:space:][:cntrl:]]")
                    & ~Q(issue_url__regex=r"[[:space:][:cntrl:]]")
                ),
                name="suite_issue_url_web",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.suite} on {self.backend}"

    def clean(self) -> None:
        suite, backend = getattr(self, "suite", None), getattr(self, "backend", None)
        if suite is not None and backend is not None and suite.project_id != backend.project_id:
            raise ValidationError({"backend": "A backend of the suite's project."})
        if self.excluded and not self.reason.strip():
            raise ValidationError({"reason": "An excluded suite needs a reason."})

    @property
    def name_on_backend(self) -> str:
        return self.name or self.suite.name


class ReferenceSuiteTest(models.Model):
    """A test of the reference backend's current run and the suite its upload named there (as
    the reference's CI calls it): the suites a test belongs to, known where every backend is
    compared. Kept by the engine each time the reference's current run is recomputed
    (``parity.engine.reference_suites``), so a page that groups a backend's ``missing`` gaps by
    suite joins this row by its test instead of reading the reference's results again. A test
    the reference runs in no named suite has none. docs/suites.md."""

    test = models.OneToOneField(
        "TestCase",
        primary_key=True,
        on_delete=models.CASCADE,
        db_constraint=False,
        related_name="reference_suite",
    )
    project = models.ForeignKey(
        "Project", on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )
    suite = models.CharField(max_length=SUITE_NAME_CHARS)

    class Meta:
        indexes = [models.Index(fields=["project", "suite"], name="referencesuite_project")]

    def __str__(self) -> str:
        return f"{self.test_id} in {self.suite}"
