"""Shapes of the read API (the field names are the contract) and of its query parameters.

Output serializers read the selectors' dataclasses and rows; none of them writes.
"""

import datetime

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema_field,
)
from rest_framework import serializers

from parity.models import GapState, TriageKind
from parity.pure.globs import MAX_PATTERN_CHARS
from parity.selectors import gap_is_stale, issue_infos, issue_urls

# --- Path and query parameters ------------------------------------------------------------------
# The URL converters' own limits: anything else never reaches a view (Django answers its HTML 404).

SLUG_PATH = OpenApiParameter(
    "slug", str, OpenApiParameter.PATH, pattern=r"^[-a-zA-Z0-9_]+$", description="A project."
)
ID_PATH = OpenApiParameter("id", {"type": "integer", "minimum": 0}, OpenApiParameter.PATH)


def _utc_midnight(day: datetime.date | None) -> datetime.datetime | None:
    if day is None:
        return None
    return datetime.datetime.combine(day, datetime.time(), tzinfo=datetime.UTC)


class ParityQuery(serializers.Serializer):
    dir = serializers.BooleanField(
        required=False, default=False, help_text="Aggregate the file heatmap by folder."
    )


class GapsQuery(serializers.Serializer):
    backend = serializers.CharField(required=False, help_text="A backend name.")
    state = serializers.ChoiceField(
        choices=GapState.choices,
        required=False,
        help_text="Default: every state but reference_missing (outside the score).",
    )
    tracked = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text="true: tracked by an issue; false: untracked (intended gaps never are).",
    )
    intended = serializers.BooleanField(required=False, allow_null=True, default=None)
    tracked_closed = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text="true: tracked, but every issue it cites is closed at its tracker.",
    )
    since = serializers.DateField(
        required=False, default=None, help_text="Gaps opened on or after this day (UTC)."
    )
    closed_since = serializers.DateField(
        required=False,
        default=None,
        help_text="List the gaps fixed on or after this day (UTC) instead of open ones.",
    )

    def filters(self) -> dict:
        data = dict(self.validated_data)
        data["since"] = _utc_midnight(data["since"])
        data["closed_since"] = _utc_midnight(data["closed_since"])
        return data


class TestsQuery(serializers.Serializer):
    q = serializers.CharField(
        required=False, default="", allow_blank=True, help_text="Part of a canonical test ID."
    )


# --- Parity ---------------------------------------------------------------------------------


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
    score = serializers.FloatField(
        allow_null=True, help_text="passing / reference_passing, rounded to 4 places."
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
    test_count = serializers.IntegerField()
    coverage_drop = serializers.BooleanField()


class CellSerializer(serializers.Serializer):
    passed = serializers.IntegerField()
    failed = serializers.IntegerField()
    error = serializers.IntegerField()
    skipped = serializers.IntegerField()
    missing = serializers.IntegerField()


class FileRowSerializer(serializers.Serializer):
    file = serializers.CharField(help_text="A test file, or a folder with ?dir=1.")
    cells = serializers.DictField(child=CellSerializer(), help_text="Keyed by backend name.")


class ParitySerializer(serializers.Serializer):
    project = serializers.CharField()
    reference = serializers.CharField(allow_null=True)
    backends = BackendParitySerializer(many=True)
    files = FileRowSerializer(many=True)


# --- Gaps -----------------------------------------------------------------------------------


class IssueSerializer(serializers.Serializer):
    key = serializers.CharField(help_text='e.g. "pytorch/xla#9017".')
    url = serializers.CharField(help_text="Empty when the project has no URL for it.")
    title = serializers.CharField(help_text="As the tracker last said; empty until read.")
    state = serializers.ChoiceField(
        choices=["unknown", "open", "closed"], help_text="unknown: not read from its tracker."
    )


class GapSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    test = serializers.CharField(source="test.key")
    test_id = serializers.IntegerField()
    backend = serializers.CharField(source="backend.name")
    state = serializers.CharField()
    reason = serializers.CharField(source="reason.text", allow_null=True)
    reason_id = serializers.IntegerField(allow_null=True)
    issues = serializers.SerializerMethodField()
    issue_details = serializers.SerializerMethodField()
    triage = serializers.CharField(source="triage.kind", allow_null=True)
    tracked = serializers.BooleanField()
    intended = serializers.BooleanField()
    tracked_closed = serializers.BooleanField(
        help_text="Tracked, but every issue it cites is closed at its tracker."
    )
    stale = serializers.SerializerMethodField()
    first_seen = serializers.DateTimeField(source="opened_at")
    closed_at = serializers.DateTimeField(allow_null=True)

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_issues(self, gap) -> list[str]:
        return issue_urls(reason=gap.reason, triage=gap.triage)

    @extend_schema_field(IssueSerializer(many=True))
    def get_issue_details(self, gap) -> list[dict]:
        return IssueSerializer(issue_infos(reason=gap.reason, triage=gap.triage), many=True).data

    def get_stale(self, gap) -> bool:
        return gap_is_stale(gap)


# --- Skip reasons ----------------------------------------------------------------------------


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


# --- Tests ----------------------------------------------------------------------------------


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


# --- Verdict --------------------------------------------------------------------------------


class OpenedCountsSerializer(serializers.Serializer):
    tracked = serializers.IntegerField()
    untracked = serializers.IntegerField()
    intended = serializers.IntegerField()
    tracked_closed = serializers.IntegerField(
        help_text="Gaps citing only closed issues (counted untracked when the project says so)."
    )


class VerdictGapSerializer(serializers.Serializer):
    test = serializers.CharField()
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


# --- Triage ---------------------------------------------------------------------------------


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
        help_text="Required for tracked.",
    )
    note = serializers.CharField(
        required=False, default="", allow_blank=True, help_text="Required for intended."
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
    stale = serializers.BooleanField(help_text="No open gap matches it any more.")
    expired = serializers.BooleanField(help_text="Past its expiry day: it no longer applies.")
    created_by = serializers.CharField(source="created_by.get_username", allow_null=True)
    created_at = serializers.DateTimeField()

    def get_backends(self, triage) -> list[str]:
        return sorted(backend.name for backend in triage.backends.all())

    def get_issue(self, triage) -> str | None:
        if triage.issue is None:
            return None
        return triage.issue.url or triage.issue.key


# --- Manifest: what CI runs on a backend ---------------------------------------------------------

MAX_RESOLVE_TESTS = 200_000


class ManifestQuery(serializers.Serializer):
    backend = serializers.CharField(max_length=50, help_text="A backend's name (or alias).")
    format = serializers.ChoiceField(
        choices=["json", "files"],
        required=False,
        help_text="files: the files to run as text/plain, one path a line.",
    )


class ExemptionSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The triage's id.")
    match = serializers.CharField(help_text="A test ID, a file, or a glob (parity.pure.globs).")
    kind = serializers.ChoiceField(choices=TriageKind.choices)
    reason = serializers.CharField()
    issue = serializers.CharField(allow_null=True)
    expires = serializers.DateField(allow_null=True)
    message = serializers.CharField(help_text="The skip message: '<reason> (<issue URL>)'.")
    file_level = serializers.BooleanField(help_text="It names whole files.")


class ManifestSerializer(serializers.Serializer):
    project = serializers.CharField()
    backend = serializers.CharField()
    reference = serializers.CharField()
    exemptions = ExemptionSerializer(many=True)
    files = serializers.ListField(
        child=serializers.CharField(),
        help_text="The reference's current test files minus file-level exemptions (not "
        "quarantine).",
    )
    durations = serializers.DictField(
        child=serializers.FloatField(), help_text="Seconds per file in recent complete runs."
    )


class RunnerTestsField(serializers.ListField):
    """Runner test IDs: strings or {classname, name, file} objects, checked one by one by the
    resolver (a DRF field per item would cost seconds for a large suite)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(max_length=MAX_RESOLVE_TESTS, allow_empty=True, **kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, list):
            self.fail("not_a_list", input_type=type(data).__name__)
        return data


class ResolveRequestSerializer(serializers.Serializer):
    backend = serializers.CharField(max_length=50)
    tests = RunnerTestsField(
        help_text="Test IDs as the runner names them: pytest node IDs "
        "('test/test_ops.py::TestOpsXLA::test_x_xla_float32'), unittest IDs "
        "('test.test_ops.TestOpsXLA.test_x_xla_float32') or objects "
        '{"classname", "name", "file"}.'
    )


class ResolvedSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text="Position in the request's tests.")
    test = serializers.JSONField(help_text="The item as sent.")
    key = serializers.CharField(help_text="Its canonical ID.")
    kind = serializers.ChoiceField(choices=TriageKind.choices)
    message = serializers.CharField()
    triage = serializers.IntegerField()


class ResolveSerializer(serializers.Serializer):
    backend = serializers.CharField()
    count = serializers.IntegerField()
    exempted = ResolvedSerializer(many=True)


# --- Errors ---------------------------------------------------------------------------------
# What every refusal looks like, so a client (and schemathesis) can rely on the documented shape.


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="What went wrong, in a sentence.")


class ValidationErrorSerializer(serializers.Serializer):
    """DRF's field errors; its schema is written by ``ValidationErrorSchema`` below because the
    keys are the request's field names (or ``non_field_errors``), not fixed ones."""


class ValidationErrorSchema(OpenApiSerializerExtension):
    target_class = ValidationErrorSerializer

    def map_serializer(self, auto_schema, direction) -> dict:
        messages = {"type": "array", "items": {"type": "string"}}
        # A list or dict field's errors nest by index or key: {"file": {"0": ["..."]}}.
        nested = {"type": "object", "additionalProperties": {}}
        return {
            "type": "object",
            "description": "Each invalid field (or non_field_errors) with its messages.",
            "additionalProperties": {"oneOf": [messages, nested]},
            "example": {"commit": ["This field is required."]},
        }


_BAD_REQUEST = PolymorphicProxySerializer(
    component_name="BadRequest",
    serializers=[ValidationErrorSerializer, ErrorSerializer],
    resource_type_field_name=None,
)

_ERROR_DESCRIPTIONS = {
    400: "Invalid input: field errors, or a detail for a request the service refuses.",
    401: "No credentials, or an unknown or revoked token.",
    403: "Credentials that may not do this (a token of another project; a session without "
    "the permission or the CSRF token).",
    404: "No such object, or not one the credentials can see.",
    413: "The request body is over PARITY_MAX_UPLOAD_BYTES; split it into shards.",
    415: "A Content-Type the endpoint does not parse.",
    429: "Throttled; retry after the Retry-After header's seconds.",
}


def error_responses(*statuses: int) -> dict[int, OpenApiResponse]:
    """The documented refusals of an endpoint, for ``extend_schema(responses=...)``."""
    return {
        code: OpenApiResponse(
            response=_BAD_REQUEST if code == 400 else ErrorSerializer,
            description=_ERROR_DESCRIPTIONS[code],
        )
        for code in statuses
    }
