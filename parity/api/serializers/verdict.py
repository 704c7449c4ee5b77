"""A run's CI verdict: the gaps it opens against its backend's baseline."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

# A page of opened gaps: a first run opens about one per test it fails or lacks, tens of
# thousands in a big project and too much JSON to list whole; a nightly run a few hundred.
GAPS_LIMIT_DEFAULT = 1000
GAPS_LIMIT_MAX = 5000


class VerdictQuery(serializers.Serializer):
    gaps_limit = serializers.IntegerField(
        required=False,
        default=GAPS_LIMIT_DEFAULT,
        min_value=0,
        max_value=GAPS_LIMIT_MAX,
        help_text=f"How many opened gaps to list (0: the counts only; at most {GAPS_LIMIT_MAX}).",
    )
    gaps_offset = serializers.IntegerField(
        required=False,
        default=0,
        min_value=0,
        max_value=2**31 - 1,  # SQL's OFFSET takes a bigint; no run has this many tests
        help_text="The first opened gap to list, in the list's order (gaps_next pages on).",
    )
    shard = serializers.CharField(
        max_length=20,
        required=False,
        default="",
        help_text='The shard asking, "I/N", as its uploads named it: while the run is not '
        "complete, the verdict judges that shard's files only (scope says so); once it is, "
        "the whole run (docs/ci.md#shards).",
    )


class OpenedCountsSerializer(serializers.Serializer):
    tracked = serializers.IntegerField()
    untracked = serializers.IntegerField()
    intended = serializers.IntegerField()
    tracked_closed = serializers.IntegerField(
        help_text="Gaps citing only closed issues (counted untracked when the project says so)."
    )
    infra = serializers.IntegerField(
        help_text="Gaps of tests whose file infrastructure lost (crashed, timed out, empty, not "
        "run, truncated): run health, counted in none of the others; rerun lists their files."
    )
    uncovered = serializers.IntegerField(
        help_text="Gaps the run did not open but uncovered: the baseline had them too, covered "
        "by an exemption that no longer applies for the run (a condition that lapsed, e.g. "
        "rocm < 7.14 at 7.14). Untracked now: they fail the gate as an opened one does."
    )
    flaky = serializers.IntegerField(
        required=False,
        help_text="Gaps of tests flaky on the backend over its window of runs (states from "
        "history, docs/history-states.md): reported as flaky, not untracked; they do not fail "
        "the gate.",
    )


class UncoveredGapSerializer(serializers.Serializer):
    test = serializers.CharField()
    test_id = serializers.IntegerField()
    state = serializers.CharField()
    reason = serializers.CharField(allow_null=True)
    exemption = serializers.IntegerField(help_text="The exemption that covered it before.")
    kind = serializers.CharField(help_text="That exemption's kind.")
    condition = serializers.CharField(
        help_text="Its condition, which the run does not meet (empty unless it lapsed)."
    )
    cause = serializers.CharField(
        help_text="Why it covers the gap no more: lapsed (its condition), expired (its expiry "
        "day passed since the previous run) or removed (deleted or set aside since)."
    )
    why = serializers.CharField(
        help_text='As said: "condition rocm < 7.14 no longer holds", "expired 2026-12-01", '
        '"removed by alice on 2026-12-03".'
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
    infra = serializers.BooleanField(
        help_text="Its file's infrastructure failed: rerun it; it is not counted in ok."
    )

    def to_representation(self, gap) -> dict:
        """What the fields above give, built directly: a first run lists a thousand gaps, and
        the fields' walk over each cost more than reading them."""
        return {
            name: None if (value := getattr(gap, name)) is None else convert(value)
            for name, convert in _GAP_CONVERTERS
        }


def _converter(field: serializers.Field):
    if isinstance(field, serializers.ListField):
        return lambda values: [str(value) for value in values]
    if isinstance(field, serializers.BooleanField):
        return bool
    return int if isinstance(field, serializers.IntegerField) else str


_GAP_CONVERTERS = tuple(
    (name, _converter(field)) for name, field in VerdictGapSerializer._declared_fields.items()
)


class ExemptedGapsSerializer(serializers.Serializer):
    exemption = serializers.IntegerField(
        allow_null=True, help_text="The triage (exemption); null: a reason's issue tracks them."
    )
    match = serializers.CharField(
        allow_null=True, help_text="The exemption's pattern or test; null for a reason's."
    )
    kind = serializers.CharField(allow_null=True, help_text="tracked, intended or quarantine.")
    reason = serializers.CharField(
        allow_null=True, help_text="The exemption's reason, or the skip reason citing the issue."
    )
    issues = serializers.ListField(child=serializers.CharField())
    tracked = serializers.BooleanField()
    intended = serializers.BooleanField()
    tracked_closed = serializers.BooleanField(help_text="Every issue they cite is closed.")
    exemption_added = serializers.BooleanField(
        help_text="The exemption was added after the exemption list the run applied."
    )
    gaps = serializers.IntegerField(help_text="How many opened gaps, listed or not.")


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
    state = serializers.CharField(help_text="crashed, timed_out, empty, not_run or truncated.")
    status = serializers.CharField(
        help_text='How its process ended: "SIGSEGV", "exit 124", "timed out", "not started".'
    )
    tests = serializers.IntegerField(allow_null=True, help_text="Tests its report held.")


class RerunFileSerializer(serializers.Serializer):
    file = serializers.CharField()
    state = serializers.CharField(help_text="crashed, timed_out, empty, not_run or truncated.")
    exit_status = serializers.CharField(
        help_text='How its process ended: "SIGSEGV", "exit 124", "timed out", "not started".'
    )
    shard = serializers.CharField(
        help_text='The shard that ran it, as the client named it ("2/4"); "" if none was sent.'
    )
    upload = serializers.IntegerField(
        allow_null=True, help_text="The upload that reported it (null: only expected)."
    )
    tests = serializers.IntegerField(allow_null=True, help_text="Tests its report held.")
    baseline_tests = serializers.IntegerField(
        allow_null=True,
        help_text="Truncated: the tests it held in the backend's last complete run.",
    )


class RerunShardSerializer(serializers.Serializer):
    shard = serializers.CharField(help_text='As the client named it ("2/4"); "" if none.')
    upload = serializers.IntegerField(allow_null=True)
    files = serializers.IntegerField(help_text="Its files to rerun.")
    failed_upload = serializers.BooleanField(
        help_text="Its upload failed to ingest: send it again, or rerun the job when its report "
        "is broken (error says why)."
    )
    error = serializers.CharField()


class RerunSerializer(serializers.Serializer):
    files = RerunFileSerializer(many=True, help_text="Files infrastructure lost, by file.")
    shards = RerunShardSerializer(
        many=True, help_text="The CI jobs (uploads) those files came from, and failed uploads."
    )


class ShardScopeSerializer(serializers.Serializer):
    shard = serializers.CharField(help_text='The shard, "I/N".')
    files = serializers.IntegerField(help_text="Its files the verdict judged.")


class SuiteTierSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="The suite, as the run's uploads name it.")
    tier = serializers.CharField(help_text="blocking, informing or broken on the run's backend.")


class VerdictSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    backend = serializers.CharField()
    ok = serializers.BooleanField(
        help_text="False when the run opened or uncovered an untracked gap or dropped coverage."
    )
    gates = serializers.BooleanField(
        help_text="Whether ok gates CI: a suite of the run is blocking on its backend, or it "
        "names none. An informing or broken suite's verdict reports; CI passes (docs/suites.md)."
    )
    suites = SuiteTierSerializer(
        many=True, help_text="The suites the run's uploads name, with their tiers."
    )
    health = serializers.SerializerMethodField(
        help_text="Run health, apart from ok (test health): unhealthy when infrastructure lost a "
        "file (crashed, timed out, empty, not run, truncated) or an upload failed to ingest; "
        "rerun says what to run again (docs/run-health.md)."
    )
    rerun = RerunSerializer(
        help_text="What to run again: the files infrastructure lost and their shards."
    )
    opened = OpenedCountsSerializer()
    closed = serializers.IntegerField()
    gaps = VerdictGapSerializer(
        many=True,
        help_text="A page of the gaps this run opened (gaps_limit from gaps_offset): untracked "
        "first (with those tracked by closed issues only first among the tracked), then tracked, "
        "then intended, each by test.",
    )
    uncovered = UncoveredGapSerializer(
        many=True,
        help_text="The gaps the run uncovered (opened.uncovered), by test: an exemption covered "
        "them in the baseline and none covers them for this run.",
    )
    exempted = ExemptedGapsSerializer(
        many=True,
        help_text="Every opened gap that is not untracked, one entry per exemption (or per "
        "reason whose issue tracks it), most gaps first: what CI prints as one line each.",
    )
    gaps_total = serializers.IntegerField(
        help_text="How many gaps the run opened, listed or not (opened's tracked + untracked + "
        "intended + infra)."
    )
    gaps_next = serializers.SerializerMethodField(
        help_text="This verdict's URL for the next page of gaps; null on the last."
    )
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
    branch = serializers.CharField(help_text="The run's branch, as uploaded; may be empty.")
    default_branch = serializers.CharField(
        help_text="The project's default branch: its complete runs (and those sent with no "
        "branch) become their backend's current run."
    )
    counts_toward_parity = serializers.BooleanField(
        help_text="False for a run on another branch (or a probe): its verdict compares it with "
        "the baseline all the same, but it never becomes current, so pages never show it."
    )
    unrun_files = VerdictFileSerializer(
        many=True,
        help_text="Files the run manifest lists as crashed, timed out, empty, never started or "
        "truncated (rerun.files says the same with their shards).",
    )
    scope = ShardScopeSerializer(
        allow_null=True,
        help_text="Asked by a shard (shard=) of a run not complete: the verdict judged that "
        "shard's files only, and says how many. Null: the whole run.",
    )

    @extend_schema_field(serializers.ChoiceField(choices=["healthy", "unhealthy"]))
    def get_health(self, verdict) -> str:
        return "healthy" if verdict.healthy else "unhealthy"

    @extend_schema_field(serializers.URLField(allow_null=True))
    def get_gaps_next(self, verdict) -> str | None:
        return self.context.get("gaps_next")
