"""Compare views: the project's list (their settings) and one view's report, each test with
its counts, state, Fisher p-value and sentence (docs/compare-views.md)."""

from django.urls import reverse
from rest_framework import serializers

from parity.pure.compare import CompareState

STATES = [(s.value, s.label) for s in CompareState]


class CompareQuery(serializers.Serializer):
    state = serializers.ChoiceField(
        choices=STATES, required=False, help_text="Only the tests in this state (default: all)."
    )


class CompareViewSerializer(serializers.Serializer):
    name = serializers.CharField()
    sample = serializers.CharField(source="sample.name", help_text="The variant judged.")
    basis = serializers.CharField(
        source="basis.name", help_text="The variant it is judged against."
    )
    days = serializers.IntegerField(help_text="The window, in days.")
    confidence = serializers.FloatField(help_text="Percent.")
    tolerance = serializers.FloatField(help_text="Pass-rate points the sample may fall below.")
    min_failures = serializers.IntegerField(help_text="The sample's failures a regression needs.")
    url = serializers.SerializerMethodField(help_text="The report's page.")

    def get_url(self, view) -> str:
        path = reverse("project-compare", kwargs={"slug": view.project.slug, "name": view.name})
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request else path


class CountsSerializer(serializers.Serializer):
    passed = serializers.IntegerField(help_text="Runs in the window the test passed in.")
    failed = serializers.IntegerField(help_text="Runs it failed or errored in.")
    rate = serializers.FloatField(allow_null=True, help_text="Pass rate, percent.")


class CompareRowSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="test_id")
    test = serializers.CharField(help_text="file::Class::name")
    state = serializers.ChoiceField(choices=STATES, source="state.value")
    sample = CountsSerializer()
    basis = CountsSerializer()
    p = serializers.FloatField(
        source="judgement.p", allow_null=True, help_text="The one-sided Fisher p-value, if tested."
    )
    sentence = serializers.CharField(help_text="Why the test is in its state.")


class CompareReportSerializer(serializers.Serializer):
    view = CompareViewSerializer()
    since = serializers.DateTimeField(help_text="The window's start.")
    sample_runs = serializers.IntegerField()
    basis_runs = serializers.IntegerField()
    counts = serializers.DictField(child=serializers.IntegerField(), help_text="Tests per state.")
    tests = CompareRowSerializer(many=True, source="rows", help_text="Worst state first.")
