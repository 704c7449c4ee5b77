"""Triages, the project's exemptions: creating one, and the list."""

from rest_framework import serializers

from parity.models import TriageKind
from parity.models.links import validate_web_url
from parity.pure.globs import MAX_PATTERN_CHARS


class TriageCreateSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=TriageKind.choices)
    gap = serializers.IntegerField(required=False, default=None, help_text="A gap's id.")
    test = serializers.IntegerField(required=False, default=None, help_text="A test's id.")
    reason = serializers.IntegerField(required=False, default=None, help_text="A reason's id.")
    match = serializers.CharField(
        required=False,
        default="",
        max_length=MAX_PATTERN_CHARS,
        help_text="A pattern over test IDs: a file (test/test_ops.py), a glob over files "
        "(test/spmd/**) or over tests (test/test_ops.py::TestOps::test_*_complex64).",
    )
    backend = serializers.CharField(
        required=False,
        default=None,
        allow_null=True,
        help_text="With test, reason or match: one backend's name; empty: every backend.",
    )
    backends = serializers.ListField(
        child=serializers.CharField(max_length=50),
        required=False,
        default=list,
        max_length=100,
        help_text="With test, reason or match: backend names; empty: every backend.",
    )
    expires_on = serializers.DateField(
        required=False,
        default=None,
        allow_null=True,
        help_text="After this day it no longer applies.",
    )
    issue_url = serializers.URLField(
        max_length=500,
        required=False,
        default="",
        allow_blank=True,
        validators=[validate_web_url],
        help_text="Required for tracked.",
    )
    note = serializers.CharField(
        required=False, default="", allow_blank=True, help_text="Required for intended."
    )
    condition = serializers.CharField(
        required=False,
        default="",
        allow_blank=True,
        max_length=1000,
        help_text="Applies only where a run's attributes match, e.g. 'arch in (gfx942, gfx90a) "
        "and rocm < 7.14' (docs/variants.md).",
    )


class TriagesQuery(serializers.Serializer):
    backend = serializers.CharField(
        max_length=50,
        required=False,
        help_text="A backend's name (or alias): the triages that apply to it, its own, its "
        "family's (a variant's) and every backend's.",
    )


class TriageSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    backends = serializers.SerializerMethodField(help_text="Backend names; empty: every backend.")
    test = serializers.CharField(source="test.key", allow_null=True)
    test_id = serializers.IntegerField(allow_null=True)
    reason = serializers.CharField(source="reason.text", allow_null=True)
    reason_id = serializers.IntegerField(allow_null=True)
    match = serializers.CharField()
    issue = serializers.SerializerMethodField()
    issue_title = serializers.CharField(
        source="issue.title", allow_null=True, help_text="As its tracker last said."
    )
    issue_state = serializers.CharField(
        source="issue.state",
        allow_null=True,
        help_text="open, closed, or unknown (not read from its tracker); closed: its issue no "
        "longer tracks anything.",
    )
    note = serializers.CharField()
    expires_on = serializers.DateField(allow_null=True)
    condition = serializers.CharField(help_text="Where it applies; empty: everywhere.")
    stale = serializers.BooleanField(
        help_text=(
            "No open gap matches it any more, and no agreement score uses it (a not-applicable "
            "declaration on tests the reference did not pass)."
        )
    )
    expired = serializers.BooleanField(help_text="Past its expiry day: it no longer applies.")
    created_by = serializers.CharField(source="created_by.get_username", allow_null=True)
    created_at = serializers.DateTimeField()

    def get_backends(self, triage) -> list[str]:
        return sorted(backend.name for backend in triage.backends.all())

    def get_issue(self, triage) -> str | None:
        if triage.issue is None:
            return None
        return triage.issue.url or triage.issue.key
