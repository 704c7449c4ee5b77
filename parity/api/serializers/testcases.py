"""Tests: the search, and one test's outcomes per backend and history."""

from rest_framework import serializers

from parity.api.serializers.compare import TestInViewSerializer


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


class StandingSerializer(serializers.Serializer):
    """``parity.definitions.Standing``: the one state every page, export and the verdict show."""

    outcome = serializers.CharField(
        help_text="passed, skipped, failed, error, missing, pending, lost (to infrastructure), "
        "not_applicable, reference_missing, or empty (no result, no gap)."
    )
    triage = serializers.CharField(
        help_text="Of a gap of the backend's own: untracked, tracked, tracked_closed, intended "
        "or flaky (its test flips over the backend's window of runs); empty otherwise."
    )
    cause = serializers.CharField(
        help_text="Lost: how (crashed, timed_out, empty, not_run, truncated)."
    )
    source = serializers.CharField(help_text="Not applicable: the declaration's source.")
    label = serializers.CharField(help_text="As the pages write it.")


class HistoryStandingSerializer(serializers.Serializer):
    """``parity.definitions.HistoryStanding``: the test's state from history on the backend."""

    state = serializers.CharField(help_text="flaky or broken.")
    since = serializers.DateTimeField(
        allow_null=True,
        help_text="broken: the first run of the failing streak; flaky: the run that judged it so.",
    )
    since_commit = serializers.CharField(help_text="That run's commit (empty: not known).")
    runs = serializers.IntegerField(help_text="The runs of its window.")
    failures = serializers.IntegerField()
    flips = serializers.IntegerField(help_text="Changes of outcome, a break's excluded.")
    rank = serializers.FloatField(
        help_text="The Wilson lower bound (95 %) of its failure rate: what it is ranked by."
    )
    label = serializers.CharField(help_text="As the pages write it.")


class BackendHistorySerializer(serializers.Serializer):
    outcome = serializers.CharField(allow_null=True, help_text="In the current run.")
    reason = serializers.CharField(allow_null=True)
    gap = serializers.CharField(
        allow_null=True,
        help_text="The open gap's state, when it is a gap of the backend's: null for a test "
        "declared not applicable there or whose file infrastructure lost (see standing).",
    )
    standing = StandingSerializer(help_text="Where the test stands on the backend.")
    history = RunOutcomeSerializer(many=True, help_text="The last runs, newest first.")
    history_state = HistoryStandingSerializer(
        allow_null=True,
        help_text="Its state from history on the backend (docs/history-states.md): flaky or "
        "broken; null for neither, or when the project keeps no states from history.",
    )


class TestCaseHistorySerializer(serializers.Serializer):
    __test__ = False

    id = serializers.IntegerField()
    test = serializers.CharField()
    file = serializers.CharField()
    backends = serializers.DictField(child=BackendHistorySerializer())
    compare = TestInViewSerializer(
        many=True,
        required=False,
        help_text="Its state in each computed compare view of the project, with its sentence "
        "(docs/compare-views.md).",
    )
