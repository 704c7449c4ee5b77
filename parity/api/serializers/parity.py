"""The parity table of a project: per backend its score and gaps, per test file its cells."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers


class ParityQuery(serializers.Serializer):
    dir = serializers.BooleanField(
        required=False, default=False, help_text="Aggregate the file heatmap by folder."
    )
    files = serializers.BooleanField(
        required=False,
        default=True,
        help_text="False: `files` is empty, the backends' numbers alone (a CI summary's read, "
        "without a cell per file and backend).",
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
        help_text="The headline score, as every page shows it, by the project's definition "
        "(score_definition; docs/scores.md). By default: of the tests the reference passes "
        "that are not intended gaps here, the share passing here (passing / "
        "(reference_passing - intended)). Rounded to 4 places; null with nothing to compare."
    )
    score_raw = serializers.SerializerMethodField(
        help_text="The same definition with intended gaps and not-applicable tests counted as "
        "failures (by default passing / (reference_passing + not_applicable)), rounded to 4 "
        "places."
    )
    score_definition = serializers.SerializerMethodField(
        help_text="What the headline counts: reference_passing, agree_reference_passed or "
        "agree_any, and whether intended gaps and not-applicable tests count."
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
    not_applicable = serializers.IntegerField(
        help_text="Tests the reference passes that are declared not applicable here and do "
        "not pass: outside reference_passing and the gaps."
    )
    rerun = serializers.IntegerField(
        help_text="Tests the reference passes that this run lacks because infrastructure lost "
        "their files (crashed, timed out, empty, not run, truncated): to rerun, outside "
        "reference_passing, the gaps and the score (docs/run-health.md)."
    )
    reference_tests = serializers.IntegerField(
        allow_null=True,
        help_text="For the agreement definitions: the tests of the reference's run compared "
        "(not pending, not applicable).",
    )
    differ_not_passed = serializers.IntegerField(
        help_text="For agree_any: tests the reference did not pass whose outcome here differs "
        "(not declared not applicable here)."
    )
    not_applicable_not_passed = serializers.IntegerField(
        help_text="For the agreement definitions: tests the reference did not pass whose "
        "outcome here differs but that are declared not applicable here: outside "
        "reference_tests and differ_not_passed."
    )
    test_count = serializers.IntegerField()
    coverage_drop = serializers.BooleanField()
    family = serializers.CharField(
        help_text="A variant's family (rocm for rocm-gfx942); empty for a family, which has "
        "no run of its own, and for a backend of no family (docs/variants.md)."
    )
    reference_run = serializers.IntegerField(
        allow_null=True,
        help_text="With ?aligned=1: the reference's run compared with run, of the same commit.",
    )

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_score(self, parity) -> float | None:
        headline = parity.scores.headline if parity.score is not None else None
        return None if headline is None else round(headline, 4)

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_score_raw(self, parity) -> float | None:
        raw = parity.scores.raw if parity.score is not None else None
        return None if raw is None else round(raw, 4)

    @extend_schema_field(
        {
            "type": "object",
            "properties": {
                "kind": {"type": "string"},
                "counts_intended": {"type": "boolean"},
                "counts_not_applicable": {"type": "boolean"},
            },
        }
    )
    def get_score_definition(self, parity) -> dict:
        definition = parity.definition
        return {
            "kind": definition.kind,
            "counts_intended": definition.counts_intended,
            "counts_not_applicable": definition.counts_not_applicable,
        }


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
    flaky = serializers.IntegerField(
        help_text="Of its open gaps, those of tests flaky on the backend over its window of "
        "runs (docs/history-states.md), no person triaged: 0 without states from history "
        "and in the aligned view."
    )


_CELL_FIELDS = tuple(CellSerializer._declared_fields)


class FileRowSerializer(serializers.Serializer):
    file = serializers.CharField(help_text="A test file, or a folder with ?dir=1.")
    cells = serializers.DictField(child=CellSerializer(), help_text="Keyed by backend name.")

    def to_representation(self, row) -> dict:
        """What the fields above give, built directly: a project's thousands of files times its
        backends made the fields' walk most of the response's time."""
        return {
            "file": str(row.file),
            "cells": {
                name: {field: int(cell.get(field, 0)) for field in _CELL_FIELDS}
                for name, cell in row.cells.items()
            },
        }


class ParitySerializer(serializers.Serializer):
    project = serializers.CharField()
    reference = serializers.CharField(allow_null=True)
    backends = BackendParitySerializer(many=True)
    files = FileRowSerializer(many=True)
    aligned = serializers.BooleanField(help_text="Whether ?aligned=1 asked for the aligned view.")
