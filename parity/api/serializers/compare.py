"""Compare views: the project's list (their settings) and one view's report, each test with
its counts, state, Fisher p-value and sentence (docs/compare-views.md)."""

from django.urls import reverse
from rest_framework import serializers

from parity.pure.compare import CompareState

STATES = [(s.value, s.label) for s in CompareState]


LIMIT_DEFAULT, LIMIT_MAX = 500, 5000  # tests a page: a view has one per test of both variants


class CompareQuery(serializers.Serializer):
    state = serializers.ChoiceField(
        choices=STATES, required=False, help_text="Only the tests in this state (default: all)."
    )
    limit = serializers.IntegerField(
        min_value=1,
        max_value=LIMIT_MAX,
        default=LIMIT_DEFAULT,
        help_text=f"Tests in this page (default {LIMIT_DEFAULT}, at most {LIMIT_MAX}).",
    )
    offset = serializers.IntegerField(
        min_value=0, default=0, help_text="Tests of the filter before this page."
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
    computed_at = serializers.DateTimeField(
        allow_null=True, help_text="When the view was last computed; null: never yet."
    )
    since = serializers.DateTimeField(allow_null=True, help_text="The window's start.")
    sample_runs = serializers.IntegerField()
    basis_runs = serializers.IntegerField()
    counts = serializers.DictField(
        child=serializers.IntegerField(), help_text="Tests per state, whatever the filter."
    )
    count = serializers.IntegerField(source="total", help_text="Tests of the filter, all pages.")
    next = serializers.CharField(allow_null=True, help_text="The next page's URL; null: the last.")
    previous = serializers.CharField(allow_null=True, help_text="The previous page's URL.")
    tests = CompareRowSerializer(
        many=True, source="rows", help_text="This page's tests, worst state first."
    )


class TestInViewSerializer(serializers.Serializer):
    """A test's state in one compare view (the test endpoint's ``compare``)."""

    __test__ = False  # not a pytest test class

    view = serializers.CharField(source="view.name")
    sample = serializers.CharField(source="view.sample.name")
    basis = serializers.CharField(source="view.basis.name")
    days = serializers.IntegerField(source="view.days")
    computed_at = serializers.DateTimeField(source="view.computed_at")
    state = serializers.SerializerMethodField(
        help_text="Its state; null: neither variant passed or failed it in the window."
    )
    sample_counts = CountsSerializer(source="row.sample", allow_null=True, default=None)
    basis_counts = CountsSerializer(source="row.basis", allow_null=True, default=None)
    p = serializers.FloatField(source="row.judgement.p", allow_null=True, default=None)
    sentence = serializers.CharField(source="row.sentence", allow_null=True, default=None)

    def get_state(self, line) -> str | None:
        return line.row.state.value if line.row is not None else None
