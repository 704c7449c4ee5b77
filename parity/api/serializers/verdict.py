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
    exemption = serializers.IntegerField(
        allow_null=True, help_text="The triage (exemption) that covers it, if any."
    )
    exemption_added = serializers.BooleanField(
        help_text="That exemption was added after the exemption list the run applied."
    )


class ListedExemptionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    match = serializers.CharField()
    kind = serializers.CharField()


class ExemptionsAppliedSerializer(serializers.Serializer):
    version = serializers.CharField(help_text="The manifest version CI applied; '' if unsent.")
    known = serializers.BooleanField(help_text="parity served that version: added/removed hold.")
    added = ListedExemptionSerializer(many=True, help_text="Exemptions added since.")
    removed = ListedExemptionSerializer(many=True, help_text="Exemptions removed since.")


class VerdictFileSerializer(serializers.Serializer):
    file = serializers.CharField()
    state = serializers.CharField(help_text="crashed, timed_out, empty or not_run.")
    status = serializers.CharField(
        help_text='How its process ended: "SIGSEGV", "exit 124", "timed out", "not started".'
    )
    tests = serializers.IntegerField(allow_null=True, help_text="Tests its report held.")


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
    probe = serializers.BooleanField(help_text="A probe run: never a gate, always ok.")
    exemptions = ExemptionsAppliedSerializer(
        help_text="The exemption list the run applied and what changed in it since."
    )
    ci_url = serializers.CharField(help_text="The CI run's page, as uploaded; may be empty.")
    unrun_files = VerdictFileSerializer(
        many=True,
        help_text="Files the run manifest lists as crashed, timed out, empty or never started.",
    )
