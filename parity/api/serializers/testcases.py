"""Tests: the search, and one test's outcomes per backend and history."""

from rest_framework import serializers


class TestsQuery(serializers.Serializer):
    q = serializers.CharField(
        required=False, default="", allow_blank=True, help_text="Part of a canonical test ID."
    )


class TestCaseSerializer(serializers.Serializer):
    __test__ = False  # not a pytest test class

    id = serializers.IntegerField()
    test = serializers.CharField(source="key")
    file = serializers.CharField()


class RunOutcomeSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    commit = serializers.CharField()
    branch = serializers.CharField()
    started_at = serializers.DateTimeField()
    complete = serializers.BooleanField()
    outcome = serializers.CharField()
    reason = serializers.CharField(allow_null=True)
    flaky = serializers.BooleanField(help_text="Rerun in an upload with differing outcomes.")


class BackendHistorySerializer(serializers.Serializer):
    outcome = serializers.CharField(allow_null=True, help_text="In the current run.")
    reason = serializers.CharField(allow_null=True)
    gap = serializers.CharField(allow_null=True, help_text="The open gap's state.")
    history = RunOutcomeSerializer(many=True, help_text="The last runs, newest first.")


class TestCaseHistorySerializer(serializers.Serializer):
    __test__ = False

    id = serializers.IntegerField()
    test = serializers.CharField()
    file = serializers.CharField()
    backends = serializers.DictField(child=BackendHistorySerializer())
