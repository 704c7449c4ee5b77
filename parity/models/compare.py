"""Compare views: a named comparison of a sample variant against a basis variant over the same
days, judged per test by Fisher's exact test (``parity.pure.compare``, docs/compare-views.md).
The view holds only its settings; the counts are read from the runs' results when a page asks
(``parity.result_reads.compare``)."""

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

    class Meta:
        ordering = ["project", "name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="compareview_unique_name")
        ]

    def __str__(self) -> str:
        return f"{self.project_id}/{self.name}"
