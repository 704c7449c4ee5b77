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
    # Hardware equivalences (vLLM: "the equivalent to B200 is MI355X"): the backend whose runs
    # of the suite this backend's are compared with.
    equivalent = models.ForeignKey(
        "Backend",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="The backend this one's runs of the suite are compared with.",
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
        equivalent = getattr(self, "equivalent", None)
        if (
            equivalent is not None
            and backend is not None
            and (equivalent.project_id != backend.project_id or equivalent.pk == backend.pk)
        ):
            raise ValidationError({"equivalent": "Another backend of the suite's project."})
        if self.excluded and not self.reason.strip():
            raise ValidationError({"reason": "An excluded suite needs a reason."})

    @property
    def name_on_backend(self) -> str:
        return self.name or self.suite.name


class SuiteRunGate(models.Model):
    """What the CI gate said of one suite's run when it finished: its run's verdict scoped to
    the suite's files (``Verdict.ok``). A run's green reads it (``SuiteRun.green``); stored
    because the verdict reads triage as it is now, and a run's green is what it was then."""

    run = models.ForeignKey("Run", on_delete=models.CASCADE, related_name="+")
    suite = models.CharField(max_length=SUITE_NAME_CHARS, help_text="As CI named it.")
    ok = models.BooleanField()
    untracked = models.PositiveIntegerField(default=0, help_text="Untracked gaps it opened.")
    at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "suite"], name="suiterungate_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.suite} in run {self.run_id}: {'ok' if self.ok else 'not ok'}"


class SuiteSummary(models.Model):
    """A suite's stored cell on one backend, as CI names it there (docs/suites.md, "Stored"):
    its newest finished runs (``recent``, newest first, at most ``HEALTH_RUNS``: the status's
    inputs and the health), and its tier with the streak since its last move. Written as each
    run of it finishes (``parity.services.suite_summaries``); the time-dependent statuses
    (stale, never ran) and a pending newer run are read at read time."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="+")
    backend = models.ForeignKey("Backend", on_delete=models.CASCADE, related_name="+")
    suite = models.CharField(max_length=SUITE_NAME_CHARS, help_text="As CI named it.")
    last_started_at = models.DateTimeField(help_text="When its newest applied run started.")
    last_run_id = models.BigIntegerField(help_text="Its newest applied run.")
    recent = models.JSONField(default=list)
    tier = models.CharField(max_length=10, default="informing")
    tier_since = models.DateTimeField(null=True, blank=True, help_text="Its last move's run.")
    greens = models.PositiveIntegerField(default=0, help_text="Greens in a row since a move.")
    reds = models.PositiveIntegerField(default=0, help_text="Reds in a row since a move.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["backend", "suite"], name="suitesummary_unique"),
        ]
        indexes = [models.Index(fields=["project"], name="suitesummary_project")]

    def __str__(self) -> str:
        return f"{self.suite} on backend {self.backend_id}: {self.tier}"


class SuiteTierMove(models.Model):
    """A suite moved tier on a backend (promoted, demoted, recovered): what the digest lists
    and the ``suite_tier_changed`` webhook announces, once per move (its run is unique)."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="+")
    backend = models.ForeignKey("Backend", on_delete=models.CASCADE, related_name="+")
    suite = models.CharField(max_length=SUITE_NAME_CHARS, help_text="As CI named it.")
    run = models.ForeignKey("Run", on_delete=models.CASCADE, related_name="+")
    before = models.CharField(max_length=10)
    after = models.CharField(max_length=10)
    at = models.DateTimeField(help_text="When the run that moved it started.")

    class Meta:
        ordering = ["-at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["backend", "suite", "run"], name="suitetiermove_once"),
        ]
        indexes = [models.Index(fields=["project", "-at"], name="suitetiermove_project_at")]

    def __str__(self) -> str:
        return f"{self.suite} on backend {self.backend_id}: {self.before} → {self.after}"


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
