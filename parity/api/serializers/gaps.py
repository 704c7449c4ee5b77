"""Open and fixed gaps, and the issues they cite."""

import datetime

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from parity import selectors
from parity.api.serializers.testcases import StandingSerializer
from parity.definitions import gap_standing
from parity.models import GapState
from parity.selectors import gap_is_stale, issue_infos, issue_urls


def _utc_midnight(day: datetime.date | None) -> datetime.datetime | None:
    if day is None:
        return None
    return datetime.datetime.combine(day, datetime.time(), tzinfo=datetime.UTC)


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
    not_applicable = serializers.BooleanField(
        required=False,
        default=False,
        help_text="true: list the tests declared not applicable on their backend instead of "
        "gaps (each with its declaration's source); they are never gaps.",
    )
    since = serializers.DateField(
        required=False, default=None, help_text="Gaps opened on or after this day (UTC)."
    )
    closed_since = serializers.DateField(
        required=False,
        default=None,
        help_text="List the gaps fixed on or after this day (UTC) instead of open ones.",
    )
    owner = serializers.CharField(
        required=False,
        max_length=200,
        help_text="Only the gaps of the test files this code owner owns (@user, @org/team or "
        "an email, as the project's CODEOWNERS names it; without case).",
    )
    history = serializers.ChoiceField(
        choices=["flaky", "broken"],
        required=False,
        allow_null=True,
        default=None,
        help_text="Only the gaps of tests in this state from history on their backend "
        "(docs/history-states.md): none for a project that keeps no states from history.",
    )
    suite = serializers.CharField(
        required=False,
        max_length=200,
        help_text="Only the tests the reference runs in this suite, one by one: the missing "
        "gaps of a suite never run on a backend are listed only then (docs/suites.md).",
    )

    aligned = serializers.BooleanField(
        required=False,
        default=False,
        help_text="List the gaps of each backend's aligned comparison (the newest commit it and "
        "the reference both have complete runs of) instead of the open gaps; backend and state "
        "filter it, the others do not apply.",
    )

    def gaps_query(self) -> selectors.GapsQuery:
        """The gaps ``gaps_list`` lists, as the query string asks (not ``aligned``'s)."""
        data = dict(self.validated_data)
        data.pop("aligned")
        data["since"] = _utc_midnight(data["since"])
        data["closed_since"] = _utc_midnight(data["closed_since"])
        return selectors.GapsQuery(**data)


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
    not_applicable = serializers.BooleanField(
        help_text="Declared not applicable on its backend (listed with ?not_applicable=true)."
    )
    source = serializers.CharField(
        source="triage.source",
        allow_null=True,
        help_text="Where its triage came from when not written in parity: hw_classification, "
        "set_test_configs:<file>, import:<format>.",
    )
    standing = serializers.SerializerMethodField(
        help_text="Where the test stands on the backend (as the test endpoint says): a test whose "
        "file infrastructure lost reads outcome lost, no triage; a declared one not_applicable."
    )
    history = serializers.SerializerMethodField(
        help_text="Its test's state from history on the backend (docs/history-states.md): "
        "flaky, broken (failing steadily over its newest runs), or empty (neither, or the "
        "project keeps no states from history)."
    )
    stale = serializers.SerializerMethodField()
    first_seen = serializers.DateTimeField(source="opened_at")
    closed_at = serializers.DateTimeField(allow_null=True)
    owners = serializers.SerializerMethodField(
        help_text="The code owners of the test's file (none: no rule gives it one)."
    )
    also_failing = serializers.SerializerMethodField(
        help_text="The other backends with an open gap on this test that their score counts: "
        "this backend's family's variants first (rocm-gfx90a beside rocm-gfx942), then the "
        "others, by name within each. Empty: it fails nowhere else."
    )
    suite = serializers.SerializerMethodField(
        help_text="The suite the reference runs the test in (the suites matrix's row); null "
        "when the reference's upload of it named none."
    )
    fails_on = serializers.SerializerMethodField(
        help_text="For a variant's gap, \"k of n\": of its family's n variants with a current run, "
        "the k that fail this test (this one included when its score counts its gap: not when "
        "intended, declared or lost to infrastructure); null for a backend with no family."
    )

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_issues(self, gap) -> list[str]:
        return issue_urls(reason=gap.reason, triage=gap.triage)

    @extend_schema_field(IssueSerializer(many=True))
    def get_issue_details(self, gap) -> list[dict]:
        infos = issue_infos(reason=gap.reason, triage=gap.triage)
        # Most gaps cite none, and a serializer built for nothing still costs its setup, once per
        # row of a page.
        return IssueSerializer(infos, many=True).data if infos else []

    @extend_schema_field(StandingSerializer)
    def get_standing(self, gap) -> dict:
        return StandingSerializer(gap_standing(gap)).data

    def get_history(self, gap) -> str:
        return getattr(gap, "history_state", "") or ""

    def get_stale(self, gap) -> bool:
        return gap_is_stale(gap)

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_owners(self, gap) -> list[str]:
        return list(getattr(gap, "file_owners", None) or [])

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_also_failing(self, gap) -> list[str]:
        also = getattr(gap, "also_failing", None)
        return list(also.backends) if also else []

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_suite(self, gap) -> str | None:
        return getattr(gap, "suite", None) or None

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_fails_on(self, gap) -> str | None:
        also = getattr(gap, "also_failing", None)
        return also.fails_on or None if also else None


class AlignedGapSerializer(serializers.Serializer):
    """A gap of the aligned view: computed from two runs of one commit, not an open gap."""

    test = serializers.CharField()
    test_id = serializers.IntegerField()
    backend = serializers.CharField()
    state = serializers.CharField()
    reason = serializers.CharField(allow_null=True)
    triage = serializers.CharField(allow_null=True)
    tracked = serializers.BooleanField()
    intended = serializers.BooleanField()
    commit = serializers.CharField(help_text="The commit both runs compared ran.")
    run = serializers.IntegerField(help_text="The backend's run compared.")


class UnrunSuiteSerializer(serializers.Serializer):
    """A suite the reference runs that a backend never ran, or excludes: one row for its
    tests' missing gaps there, which the list leaves out (docs/suites.md)."""

    suite = serializers.CharField()
    backend = serializers.CharField()
    status = serializers.ChoiceField(choices=["never_ran", "excluded"])
    missing = serializers.IntegerField(
        help_text="Its tests' open missing gaps on the backend, under the list's filters."
    )
    reason = serializers.CharField(help_text="An exclusion's reason; empty otherwise.")
    issue_url = serializers.CharField(help_text="An exclusion's issue; empty otherwise.")
