"""Compare views: a named comparison of a sample variant against a basis variant over the same
days, judged per test by Fisher's exact test (``parity.pure.compare``, docs/compare-views.md).
The view holds its settings and when its judgement was last kept (with its window's run counts
and its tests per state); each test's judgement is a ``CompareRow``, written by
``parity.services.compare_rows`` after a recompute of either variant or a save of the settings,
and read by every surface (page, CSV, API, the test page, the overview's headline)."""

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models


class CompareView(models.Model):
    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="compare_views")
    name = models.SlugField(max_length=80, help_text="e.g. gfx90a-vs-cuda: in the page's URL.")
    sample = models.ForeignKey(
        "Backend",
        on_delete=models.CASCADE,
        related_name="+",
        help_text="The variant judged (rocm-gfx90a).",
    )
    basis = models.ForeignKey(
        "Backend",
        on_delete=models.CASCADE,
        related_name="+",
        help_text="The variant it is judged against (cuda).",
    )
    days = models.PositiveSmallIntegerField(
        default=14,
        validators=[MinValueValidator(1), MaxValueValidator(365)],
        help_text="The window: both variants' complete runs of the default branch these last days.",
    )
    confidence = models.FloatField(
        default=95.0,
        validators=[MinValueValidator(50.0), MaxValueValidator(99.99)],
        help_text="Percent: a regression's Fisher p-value is below 1 - confidence.",
    )
    tolerance = models.FloatField(
        default=5.0,
        validators=[MinValueValidator(0.0), MaxValueValidator(100.0)],
        help_text="Pass-rate points the sample may fall below the basis before it is tested.",
    )
    min_failures = models.PositiveSmallIntegerField(
        default=3, help_text="The sample's failures a regression needs at least."
    )
    # The kept judgement (``CompareRow``): None until first computed.
    computed_at = models.DateTimeField(null=True, blank=True, editable=False)
    computed_since = models.DateTimeField(null=True, blank=True, editable=False)
    sample_runs = models.PositiveIntegerField(default=0, editable=False)
    basis_runs = models.PositiveIntegerField(default=0, editable=False)
    state_counts = models.JSONField(default=dict, blank=True, editable=False)  # state: tests
    # A later refresh is queued for then (the debounce, docs/compare-views.md); None: none is.
    refresh_due_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["project", "name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="compareview_unique_name")
        ]

    def __str__(self) -> str:
        return f"{self.project_id}/{self.name}"


class CompareRow(models.Model):
    """One test's kept judgement in a view: its counts over the window, its state and p-value.
    Its sentence is made from these when read (``parity.pure.compare.sentence``), so it names
    the variants as they are named now. ``position`` is its place in the report (worst state
    first, then the largest drop, then the test's ID), so a page of it is an index range."""

    view = models.ForeignKey(CompareView, on_delete=models.CASCADE, related_name="rows")
    test = models.ForeignKey("TestCase", on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField()
    state = models.CharField(max_length=16)  # parity.pure.compare.CompareState
    sample_passed = models.PositiveIntegerField()
    sample_failed = models.PositiveIntegerField()
    basis_passed = models.PositiveIntegerField()
    basis_failed = models.PositiveIntegerField()
    p = models.FloatField(null=True)
    drop = models.FloatField(null=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["view", "test"], name="comparerow_unique_test")
        ]
        indexes = [
            models.Index(fields=["view", "position"], name="comparerow_position"),
            models.Index(fields=["view", "state", "position"], name="comparerow_state"),
        ]

    def __str__(self) -> str:
        return f"{self.view_id}/{self.test_id}: {self.state}"
