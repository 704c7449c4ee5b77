"""Version transitions: the project's list and one transition with its tests of each kind."""

from django.urls import reverse
from rest_framework import serializers

from parity.models import TransitionKind


class TransitionQuery(serializers.Serializer):
    kind = serializers.ChoiceField(
        choices=TransitionKind.choices,
        required=False,
        help_text="Only this list of tests (default: all four).",
    )
    limit = serializers.IntegerField(
        min_value=0, max_value=1000, default=100, help_text="Tests per list (0: counts only)."
    )
    offset = serializers.IntegerField(
        min_value=0, max_value=10**9, default=0, help_text="Skip this many tests of each list."
    )


class TransitionLapseSerializer(serializers.Serializer):
    triage = serializers.IntegerField(help_text="The exemption's id.")
    match = serializers.CharField(help_text="What it matches.")
    condition = serializers.CharField()
    before = serializers.BooleanField(help_text="Whether the condition held on the run before.")
    after = serializers.BooleanField(help_text="Whether it holds on the run after.")


class TransitionSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    backend = serializers.CharField(source="backend.name")
    from_run = serializers.IntegerField(source="from_run_id", help_text="The run before.")
    to_run = serializers.IntegerField(source="to_run_id", help_text="The run after.")
    at = serializers.DateTimeField(help_text="When CI ran the run after.")
    changed = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField(allow_null=True)),
        help_text="{key: [before, after]}, null where a run lacks the key, e.g. "
        '{"rocm": ["7.1", "7.14"]}.',
    )
    counts = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Tests per kind: fail_to_pass, pass_to_fail, new, gone.",
    )
    lapses = TransitionLapseSerializer(
        many=True, help_text="Conditioned exemptions whose condition stopped or started holding."
    )
    url = serializers.SerializerMethodField(help_text="The report's page.")

    def get_url(self, transition) -> str:
        path = reverse(
            "project-transition", kwargs={"slug": transition.project.slug, "pk": transition.pk}
        )
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request else path


class MovedTestSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="test_id")
    test = serializers.CharField(help_text="Canonical test ID.")
    before = serializers.CharField(allow_null=True, help_text="Outcome before; null: not run.")
    after = serializers.CharField(allow_null=True, help_text="Outcome after; null: not run.")


class MovedListSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=TransitionKind.choices)
    total = serializers.IntegerField()
    offset = serializers.IntegerField()
    tests = MovedTestSerializer(many=True)


class TransitionDetailSerializer(TransitionSerializer):
    expired = serializers.BooleanField(
        help_text="Retention deleted a run's results: no tests listed, counts as recorded."
    )
    lists = MovedListSerializer(many=True, help_text="In the order of kind's values.")
