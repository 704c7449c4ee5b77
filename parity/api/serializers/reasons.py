"""Skip reasons and their trends."""

from rest_framework import serializers

from parity.api.serializers.gaps import IssueSerializer

_GAPS_CAUSED = (
    "Open gaps against the reference it causes on each backend: tests skipped for it there "
    "that pass on the reference."
)


_UNTRIAGED = (
    "Of those gaps, per backend, the ones no issue tracks and no triage (of the reason, the "
    "test, or an exemption) calls intended."
)


class SkipReasonSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    reason = serializers.CharField()
    xfail = serializers.BooleanField(
        help_text="An expected failure's reason (pytest xfail, unittest expectedFailure); it "
        "counts as a skip."
    )
    backends = serializers.DictField(
        child=serializers.IntegerField(), help_text="Tests skipped for it in each current run."
    )
    gaps = serializers.DictField(child=serializers.IntegerField(), help_text=_GAPS_CAUSED)
    untriaged = serializers.DictField(child=serializers.IntegerField(), help_text=_UNTRIAGED)
    issues = serializers.ListField(child=serializers.CharField())
    issue_details = IssueSerializer(many=True)
    tracked = serializers.BooleanField()
    intended = serializers.BooleanField()
    common = serializers.BooleanField(help_text="It causes no gap on any backend.")
    first_seen = serializers.DateTimeField()
    last_seen = serializers.DateTimeField()
    category = serializers.CharField(
        help_text="Its category by the project's skip rules; empty when no rule matches."
    )
    disposition = serializers.ChoiceField(
        choices=["intended", "needs_work", "infra", "unknown"],
        help_text="What its category asks: by design, backend work, CI work, or nobody said.",
    )


class NoReasonSerializer(serializers.Serializer):
    backends = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Tests skipped with no reason (an empty message) in each current run.",
    )
    gaps = serializers.DictField(child=serializers.IntegerField(), help_text=_GAPS_CAUSED)
    untriaged = serializers.DictField(child=serializers.IntegerField(), help_text=_UNTRIAGED)


class SkipReasonListSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    untracked = serializers.IntegerField(
        help_text="Reasons that cause gaps no issue tracks and no triage calls intended."
    )
    no_reason = NoReasonSerializer(help_text="Skips whose message gave no reason.")
    results = SkipReasonSerializer(many=True)


class TrendDaySerializer(serializers.Serializer):
    day = serializers.DateField()
    backends = serializers.DictField(child=serializers.IntegerField())


class TrendQuery(serializers.Serializer):
    days = serializers.IntegerField(
        required=False,
        default=90,
        min_value=1,
        max_value=3660,
        help_text="How many days, up to the reason's latest day with counts.",
    )


class ReasonTrendSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    reason = serializers.CharField()
    days = TrendDaySerializer(many=True)
