"""Targets with their progress and forecast (docs/targets.md), and a new target's fields."""

from rest_framework import serializers


class TargetSerializer(serializers.Serializer):
    """A ``parity.selectors.targets.TargetProgress``."""

    id = serializers.IntegerField(source="target.pk")
    backend = serializers.CharField()
    score = serializers.FloatField(source="target.score", help_text="The share to reach, 0-1.")
    due = serializers.DateField(source="target.due")
    note = serializers.CharField(source="target.note")
    denominator = serializers.IntegerField(
        source="target.denominator",
        help_text="The score's whole when the target was set (the expected set), kept since.",
    )
    goal = serializers.IntegerField(
        source="forecast.goal", help_text="Passing tests asked for: ceil(score x denominator)."
    )
    passing = serializers.IntegerField(
        source="forecast.passing", allow_null=True, help_text="On the last day with a run."
    )
    remaining = serializers.IntegerField(source="forecast.remaining")
    published = serializers.FloatField(
        allow_null=True, help_text="The published figure: the headline score, of today's whole."
    )
    steering = serializers.FloatField(
        source="forecast.steering",
        allow_null=True,
        help_text="The steering figure: passing over the fixed denominator, at most 1.",
    )
    rate_per_day = serializers.FloatField(
        source="forecast.rate",
        allow_null=True,
        help_text="Passing tests gained a day: the least-squares slope over rate_weeks.",
    )
    rate_weeks = serializers.IntegerField(source="target.rate_weeks")
    forecast = serializers.DateField(
        source="forecast.on",
        allow_null=True,
        help_text="today + ceil(remaining / rate); null when met or with no progress.",
    )
    met = serializers.BooleanField(source="forecast.met")
    no_progress = serializers.BooleanField(
        source="forecast.no_progress", help_text="Not met, and the rate is zero or less."
    )
    at_risk = serializers.BooleanField(
        help_text="No progress or a forecast after the date; leaves only margin_days before it."
    )
    margin_days = serializers.IntegerField(source="target.margin_days")
    created_at = serializers.DateTimeField(source="target.created_at")


class TargetCreateSerializer(serializers.Serializer):
    backend = serializers.CharField(max_length=100)
    score = serializers.FloatField(min_value=0, max_value=1, help_text="A share: 0.95, not 95.")
    due = serializers.DateField()
    note = serializers.CharField(max_length=2000, required=False, default="", allow_blank=True)
    rate_weeks = serializers.IntegerField(min_value=1, max_value=52, default=4)
    margin_days = serializers.IntegerField(min_value=0, max_value=365, default=7)
