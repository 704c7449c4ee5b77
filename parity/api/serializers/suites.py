"""The suites matrix over the read API (docs/suites.md): each logical suite, and on each backend
its run status, its last run and the health of its last runs."""

from rest_framework import serializers

from parity.pure.suite_runs import STATUSES, TIERS


class SuiteHealthSerializer(serializers.Serializer):
    runs = serializers.IntegerField(help_text="Its last finished runs read (at most 5).")
    greens = serializers.IntegerField(
        help_text="Of them, green: the CI gate passed for it (no untracked gap opened), it "
        "ran, and no file timed out."
    )
    pass_rate = serializers.FloatField(allow_null=True, help_text="greens ÷ runs; null: none.")
    timeouts = serializers.IntegerField(help_text="Of them, runs with a file that timed out.")
    consecutive_greens = serializers.IntegerField(help_text="Green runs in a row, newest first.")


class SuiteLastRunSerializer(serializers.Serializer):
    run = serializers.IntegerField(source="run_id", help_text="The parity run the uploads are of.")
    started_at = serializers.DateTimeField()
    uploads = serializers.IntegerField()
    tests = serializers.IntegerField()
    failed_tests = serializers.IntegerField(help_text="Failed or error.")
    timed_out_files = serializers.IntegerField()


class SuiteCellSerializer(serializers.Serializer):
    backend = serializers.CharField()
    name = serializers.CharField(help_text="What this backend's CI calls the suite.")
    status = serializers.ChoiceField(choices=STATUSES, source="cell.status")
    reason = serializers.CharField(source="cell.reason", help_text="An exclusion's reason.")
    issue_url = serializers.CharField(source="cell.issue_url", help_text="An exclusion's issue.")
    tier = serializers.ChoiceField(
        choices=TIERS,
        source="cell.tier",
        help_text="blocking, informing or broken, from its runs and the suite's tier rules.",
    )
    equivalent = serializers.CharField(
        help_text="The backend the suite map compares this one's runs of it with ('' none)."
    )
    last_run = SuiteLastRunSerializer(source="cell.last", allow_null=True)
    health = SuiteHealthSerializer(source="cell.health")


class SuiteRowSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="The logical suite.")
    mapped = serializers.BooleanField(help_text="The project's suite map names it.")
    statuses = serializers.DictField(child=serializers.IntegerField())
    cells = SuiteCellSerializer(many=True)


class SuiteMatrixSerializer(serializers.Serializer):
    backends = serializers.SerializerMethodField()
    window_days = serializers.IntegerField()
    statuses = serializers.DictField(
        child=serializers.IntegerField(), help_text="Cells of each status, the whole matrix."
    )
    suites = SuiteRowSerializer(source="rows", many=True)

    def get_backends(self, matrix) -> list[str]:
        return [b.name for b in matrix.backends]
