"""A run's CI verdict: the gaps it opens against its backend's baseline."""

from rest_framework import serializers


class OpenedCountsSerializer(serializers.Serializer):
    tracked = serializers.IntegerField()
    untracked = serializers.IntegerField()
    intended = serializers.IntegerField()
    tracked_closed = serializers.IntegerField(
        help_text="Gaps citing only closed issues (counted untracked when the project says so)."
    )


class VerdictGapSerializer(serializers.Serializer):
    test = serializers.CharField()
    test_id = serializers.IntegerField(
        help_text="The test's id: its page is /p/<slug>/tests/<id>/."
    )
    backend = serializers.CharField()
    state = serializers.CharField()
    reason = serializers.CharField(allow_null=True)
    issues = serializers.ListField(child=serializers.CharField())
    triage = serializers.CharField(allow_null=True)
    tracked = serializers.BooleanField()
    intended = serializers.BooleanField()
    tracked_closed = serializers.BooleanField(
        help_text="Every issue it cites is closed; with the project's closed_issues_untracked "
        "it counts untracked (tracked is false)."
    )


class VerdictSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    backend = serializers.CharField()
    ok = serializers.BooleanField(
        help_text="False when the run opened an untracked gap or dropped coverage."
    )
    opened = OpenedCountsSerializer()
    closed = serializers.IntegerField()
    gaps = VerdictGapSerializer(many=True, help_text="The gaps this run opened.")
    complete = serializers.BooleanField()
    baseline_run = serializers.IntegerField(
        allow_null=True, help_text="The backend's current run before this one."
    )
    coverage_drop = serializers.BooleanField()
    test_count = serializers.IntegerField()
    baseline_test_count = serializers.IntegerField(allow_null=True)
