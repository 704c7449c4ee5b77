"""The parity table of a project: per backend its score and gaps, per test file its cells."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers


class ParityQuery(serializers.Serializer):
    dir = serializers.BooleanField(
        required=False, default=False, help_text="Aggregate the file heatmap by folder."
    )
    aligned = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Compare each backend with the reference at the newest commit both have "
        "complete runs of (named per backend: commit, run, reference_run), not at their "
        "current runs.",
    )


class GapCountsSerializer(serializers.Serializer):
    skipped = serializers.IntegerField()
    failed = serializers.IntegerField()
    error = serializers.IntegerField()
    missing = serializers.IntegerField()


class BackendParitySerializer(serializers.Serializer):
    backend = serializers.CharField()
    is_reference = serializers.BooleanField()
    run = serializers.IntegerField(allow_null=True, help_text="The current run.")
    commit = serializers.CharField(allow_null=True)
    complete = serializers.BooleanField()
    started_at = serializers.DateTimeField(allow_null=True)
    score = serializers.SerializerMethodField(
        help_text="The headline score, as every page shows it: of the tests the reference "
        "passes that are not intended gaps here, the share passing here (passing / "
        "(reference_passing - intended)), rounded to 4 places; null with nothing to compare."
    )
    score_raw = serializers.FloatField(
        source="score",
        allow_null=True,
        help_text="passing / reference_passing, intended gaps counted as failures, rounded to "
        "4 places.",
    )
    passing = serializers.IntegerField(help_text="Tests passing here and on the reference.")
    reference_passing = serializers.IntegerField()
    gaps = GapCountsSerializer()
    tracked = serializers.IntegerField()
    untracked = serializers.IntegerField()
    intended = serializers.IntegerField()
    tracked_closed = serializers.IntegerField(
        help_text="Of the tracked gaps, those whose every cited issue is closed at its tracker."
    )
    reference_missing = serializers.IntegerField(
        help_text="Tests run here but not on the reference (outside the score)."
    )
    pending = serializers.IntegerField(
        help_text="Tests the reference passes that it first ran after this backend's current "
        "run: not yet run there, outside reference_passing and the gaps."
    )
    test_count = serializers.IntegerField()
    coverage_drop = serializers.BooleanField()
    reference_run = serializers.IntegerField(
        allow_null=True,
        help_text="With ?aligned=1: the reference's run compared with run, of the same commit.",
    )

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_score(self, parity) -> float | None:
        headline = parity.scores.headline if parity.score is not None else None
        return None if headline is None else round(headline, 4)


class CellSerializer(serializers.Serializer):
    passed = serializers.IntegerField()
    failed = serializers.IntegerField()
    error = serializers.IntegerField()
    skipped = serializers.IntegerField()
    missing = serializers.IntegerField()
    pending = serializers.IntegerField(
        help_text="Tests the reference passes that it first ran after this backend's current "
        "run: not yet run there, no gap."
    )


class FileRowSerializer(serializers.Serializer):
    file = serializers.CharField(help_text="A test file, or a folder with ?dir=1.")
    cells = serializers.DictField(child=CellSerializer(), help_text="Keyed by backend name.")


class ParitySerializer(serializers.Serializer):
    project = serializers.CharField()
    reference = serializers.CharField(allow_null=True)
    backends = BackendParitySerializer(many=True)
    files = FileRowSerializer(many=True)
    aligned = serializers.BooleanField(help_text="Whether ?aligned=1 asked for the aligned view.")
