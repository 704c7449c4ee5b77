"""What CI runs on a backend (the manifest), and resolving a runner's test IDs to exemptions."""

from rest_framework import serializers

from parity.models import TriageKind
from parity.pure.attributes import AttributesError, attributes_check

MAX_RESOLVE_TESTS = 200_000


class AttributesField(serializers.DictField):
    """Run attributes, checked as an upload's are (``parity.pure.attributes``)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(child=serializers.CharField(max_length=100), **kwargs)

    def to_internal_value(self, data) -> dict:
        try:
            return attributes_check(data)
        except AttributesError as exc:
            raise serializers.ValidationError(str(exc)) from None


def attributes_from_query(pairs: list[str]) -> dict[str, str] | None:
    """``?attr=arch=gfx942&attr=rocm=7.1`` as attributes; None when none is sent."""
    if not pairs:
        return None
    attributes = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise serializers.ValidationError({"attr": [f"{pair!r}: write key=value."]})
        attributes[key.strip()] = value.strip()
    try:
        return attributes_check(attributes)
    except AttributesError as exc:
        raise serializers.ValidationError({"attr": [str(exc)]}) from None


class ManifestQuery(serializers.Serializer):
    backend = serializers.CharField(max_length=50, help_text="A backend's name (or alias).")
    attr = serializers.CharField(
        required=False,
        help_text="Repeatable key=value: the run's attributes (arch=gfx942, rocm=7.1). They "
        "pick the backend's variant, and the conditioned exemptions that hold; none: the "
        "backend's current run's (docs/variants.md).",
    )
    format = serializers.ChoiceField(
        choices=["json", "files"],
        required=False,
        help_text="files: the files to run as text/plain, one path a line.",
    )
    run = serializers.CharField(
        max_length=200,
        required=False,
        default="",
        help_text="The run key the shards of a CI run upload under: the files and durations "
        "are those first answered under it, so every shard splits the same list (with an "
        "upload token of the project the first request pins them; without one, a pin is "
        "read, never made). Exemptions stay live (docs/ci.md#shards).",
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
    passes_now = serializers.BooleanField(
        help_text="Every test it covers passed in the backend's latest probe run: remove it."
    )
    condition = serializers.CharField(
        help_text="Where it applies (it holds for the attributes asked about); empty: everywhere."
    )


class SplitSerializer(serializers.Serializer):
    run = serializers.CharField(help_text="The run key the files and durations are pinned for.")
    pinned_at = serializers.DateTimeField(help_text="When its first shard asked.")


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
    version = serializers.CharField(
        help_text="A hash of the exemptions and files: send it with the upload "
        "(exemptions_version) so the verdict says which list the run applied."
    )
    split = SplitSerializer(
        allow_null=True,
        required=False,
        help_text="Asked with run=: the pin the files and durations come from; null: none "
        "(asked without run=, or without an upload token and no shard pinned it yet).",
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
    attributes = AttributesField(
        required=False,
        default=None,
        allow_null=True,
        help_text='The run\'s attributes, {"arch": "gfx942", "rocm": "7.1"}: they pick the '
        "backend's variant and the conditioned exemptions that hold; none: the backend's "
        "current run's.",
    )
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
    version = serializers.CharField(help_text="The manifest version these exemptions are of.")
    count = serializers.IntegerField()
    exempted = ResolvedSerializer(many=True)
