import json

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from parity.models import Upload
from parity.models.links import validate_web_url
from parity.pure.attributes import (
    MAX_ATTRIBUTES,
    MAX_VALUE_CHARS,
    AttributesError,
    attributes_check,
)
from parity.pure.declarations import DeclarationsError, classifications_parse
from parity.pure.nul import nul_message
from parity.pure.run_manifest import MAX_FILE_CHARS, MAX_FILES, ManifestError, manifest_parse


@extend_schema_field(OpenApiTypes.BINARY)
class UploadedFileField(serializers.FileField):
    """A file part of a multipart request. drf-spectacular documents a plain FileField as a URI
    (its response form), which told clients to send a URL string where the API wants bytes."""


def _storable(value):
    """``value``, parsed from a JSON field, unless it holds a NUL the database cannot store."""
    problem = nul_message(value)
    if problem is not None:
        raise serializers.ValidationError(f"The JSON {problem}")
    return value


def _json_part(schema: dict) -> type[serializers.CharField]:
    """A form field the API reads as JSON text: documented as the JSON value it holds, the
    request's encoding saying the part is ``application/json`` (``UploadView``)."""

    @extend_schema_field(schema)
    class JsonPartField(serializers.CharField):
        openapi_json_part = True  # parity.api.schema drops the text default

    return JsonPartField


_TEXT = {"type": "string", "minLength": 1}
AttributesPart = _json_part(
    {
        "type": "object",
        "maxProperties": MAX_ATTRIBUTES,
        # OpenAPI 3.0 has no propertyNames: the key rule is in the description.
        "additionalProperties": {**_TEXT, "maxLength": MAX_VALUE_CHARS, "pattern": r"\S"},
    }
)
ManifestPart = _json_part(
    {
        "type": "object",
        "required": ["files"],
        "additionalProperties": False,
        "properties": {
            "version": {},
            "files": {
                "type": "array",
                "maxItems": MAX_FILES,
                "items": {
                    "type": "object",
                    "required": ["file"],
                    "additionalProperties": False,
                    "properties": {
                        "file": {**_TEXT, "maxLength": MAX_FILE_CHARS, "pattern": r"\S"},
                        "started": {"type": "boolean"},
                        "exit_code": {"type": "integer", "nullable": True},
                        "signal": {"type": "string", "maxLength": 20, "nullable": True},
                        "timed_out": {"type": "boolean"},
                        "duration": {"type": "number", "minimum": 0, "nullable": True},
                        "report": {"type": "boolean"},
                        "tests": {"type": "integer", "minimum": 0, "nullable": True},
                    },
                },
            },
        },
    }
)
ClassificationsPart = _json_part(
    {
        "type": "object",
        "additionalProperties": {"type": "string", "enum": ["GENERIC", "ACCELERATOR"]},
    }
)
# The parts the upload API reads as JSON text (the request body's multipart encoding).
JSON_PARTS = ("attributes", "run_manifest", "hw_classification")


class UploadCreateSerializer(serializers.Serializer):
    # At least one of them (to_internal_value checks it); the OpenAPI schema says so too.
    openapi_any_of_required = ("file", "run_manifest")

    project = serializers.SlugField()
    # min_length only documents what the blank check already enforces.
    backend = serializers.CharField(min_length=1, max_length=50)
    commit = serializers.CharField(min_length=1, max_length=64)
    branch = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
    run = serializers.CharField(
        max_length=200,
        required=False,
        default="",
        allow_blank=True,
        help_text="Client key grouping shard uploads into one run; default commit:branch:backend.",
    )
    ci_url = serializers.URLField(
        max_length=500,
        required=False,
        default="",
        allow_blank=True,
        validators=[validate_web_url],  # the run's page links to it
    )
    complete = serializers.BooleanField(
        required=False, default=False, help_text="This upload is the run's last shard."
    )
    timestamp = serializers.DateTimeField(
        required=False,
        default=None,
        allow_null=True,
        help_text="When the run happened (ISO 8601); default now. For backfilling history.",
    )
    file_hint = serializers.CharField(
        max_length=500,
        required=False,
        default="",
        allow_blank=True,
        help_text="Test file for XML that names none (unittest run as __main__).",
    )
    probe = serializers.BooleanField(
        required=False,
        default=False,
        help_text="A probe run: exempted tests ran too. It never becomes current and moves no "
        "number or gap; it records which exemptions pass now.",
    )
    exemptions_version = serializers.CharField(
        max_length=64,
        required=False,
        default="",
        allow_blank=True,
        help_text="The manifest 'version' of the exemption list the run applied.",
    )
    hw_classification = ClassificationsPart(
        required=False,
        default="",
        allow_blank=True,
        help_text='JSON {"<file>::<Class>": "GENERIC" | "ACCELERATOR"}: the classes\' '
        "hw_classification, as the pytest plugin reads it at collection. GENERIC classes "
        "are declared not applicable on the other backends (docs/declarations.md).",
    )
    shard = serializers.CharField(
        max_length=20,
        required=False,
        default="",
        allow_blank=True,
        help_text='The CI job\'s shard as the client names it ("2/4"); the verdict names it to '
        "rerun when its files crashed, timed out or were cut short.",
    )
    suite = serializers.CharField(
        max_length=200,
        required=False,
        default="",
        allow_blank=True,
        help_text="The suite or CI job this upload is of, as CI names it on its backend "
        '("default", "tpu-tests"): the suites matrix reads it (docs/suites.md).',
    )
    file = serializers.ListField(
        child=UploadedFileField(allow_empty_file=True),
        required=False,
        default=list,
        help_text="One or more .xml, .xml.gz, .zip or .tar.gz files (none: only a run_manifest).",
    )
    run_manifest = ManifestPart(
        required=False,
        default="",
        allow_blank=True,
        help_text='The run manifest, JSON: {"files": [{"file", "started", "exit_code", "signal", '
        '"timed_out", "duration", "report", "tests"}]}, what the job was told to run and what '
        "happened to each file (docs/api.md).",
    )

    attributes = AttributesPart(
        required=False,
        default="",
        allow_blank=True,
        max_length=5000,
        help_text='What the run ran on, a JSON object: {"arch": "gfx942", "rocm": "7.1"}. Keys '
        "like [a-z][a-z0-9_.-]{0,49}, values up to 100 characters, at most 20. A project's "
        "variant keys (arch) send the run to the backend's variant (rocm-gfx942) "
        "(docs/variants.md). Every shard of a run sends the same, or none.",
    )

    def validate_attributes(self, value: str) -> dict:
        if not value:
            return {}
        try:
            return attributes_check(_storable(json.loads(value)))
        except ValueError as exc:  # AttributesError, or JSON that does not decode
            what = "" if isinstance(exc, AttributesError) else "not JSON: "
            raise serializers.ValidationError(f"{what}{exc}") from None

    def validate_hw_classification(self, value: str) -> dict:
        try:
            return _storable(classifications_parse(value))
        except DeclarationsError as exc:
            raise serializers.ValidationError(str(exc)) from None

    def validate_run_manifest(self, value: str) -> tuple:
        if not value:
            return ()
        try:
            return tuple(manifest_parse(_storable(json.loads(value))))
        except ValueError as exc:  # ManifestError, or JSON that does not decode
            what = "" if isinstance(exc, ManifestError) else "not JSON: "
            raise serializers.ValidationError(f"{what}{exc}") from None

    def to_internal_value(self, data: dict) -> dict:
        # Checked beside the fields' own errors, so a request missing several is told all.
        errors: dict = {}
        try:
            attrs = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            errors = dict(exc.detail)
        if not data.get("file") and not data.get("run_manifest"):
            errors.setdefault(
                "file", ["Send at least one 'file' part (.xml, .xml.gz, .zip or .tar.gz)."]
            )
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


class UploadSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    warnings = serializers.ListField(
        child=serializers.CharField(),
        read_only=True,
        help_text="What ingest skipped and why, one sentence each (a symbolic link in an "
        "archive); empty when nothing was.",
    )

    class Meta:
        model = Upload
        fields = [
            "id",
            "status",
            "run",
            "suite",
            "error",
            "counts",
            "warnings",
            "size",
            "sha256",
            "created_at",
            "started_at",
            "finished_at",
            "url",
        ]

    def get_url(self, upload: Upload) -> str:
        request = self.context.get("request")
        path = f"/api/v1/uploads/{upload.pk}/"
        return request.build_absolute_uri(path) if request else path


class RunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    project = serializers.CharField(source="project.slug")
    backend = serializers.CharField(source="backend.name")
    key = serializers.CharField()
    commit = serializers.CharField()
    branch = serializers.CharField()
    ci_url = serializers.CharField()
    complete = serializers.BooleanField()
    probe = serializers.BooleanField()
    exemptions_version = serializers.CharField()
    attributes = serializers.DictField(child=serializers.CharField())
    started_at = serializers.DateTimeField()
    completed_at = serializers.DateTimeField(allow_null=True)


class OidcExchangeSerializer(serializers.Serializer):
    project = serializers.SlugField(help_text="The project to upload to; its trust rules decide.")


class ExchangedTokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="An upload token: send 'Authorization: Token <it>'.")
    expires_at = serializers.DateTimeField()
    project = serializers.CharField(source="project.slug")
    backends = serializers.ListField(
        child=serializers.CharField(), help_text="The backends it may upload to; empty: all."
    )
    rule = serializers.IntegerField(source="rule.pk", help_text="The trust rule that matched.")
