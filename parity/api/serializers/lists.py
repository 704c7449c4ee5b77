"""The lists teams keep, imported and exported (docs/lists.md): an import's request and its
report, an export's query."""

from rest_framework import serializers

from parity.models import TriageKind
from parity.pure.list_formats import FORMATS

IMPORT_FORMATS = [name for name in FORMATS if name != "yaml"]
MAX_LIST_CHARS = 8 * 1024 * 1024


class ListImportSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=IMPORT_FORMATS)
    content = serializers.CharField(
        max_length=MAX_LIST_CHARS, trim_whitespace=False, help_text="The file's text."
    )
    name = serializers.CharField(
        max_length=300,
        required=False,
        default="",
        allow_blank=True,
        help_text="The file's path: part of the list's source for per-file formats, and of "
        "the notes its entries get.",
    )
    source = serializers.CharField(
        max_length=200,
        required=False,
        default="",
        allow_blank=True,
        help_text="Record the list under this source; empty: the format's (docs/lists.md).",
    )
    kind = serializers.ChoiceField(
        choices=TriageKind.choices,
        required=False,
        default="",
        help_text="Every entry's kind; absent: the format's own.",
    )
    condition = serializers.CharField(
        max_length=500,
        required=False,
        default="",
        allow_blank=True,
        help_text="Every entry's condition over run attributes, e.g. 'arch == arc'.",
    )
    backends = serializers.ListField(
        child=serializers.CharField(max_length=50),
        required=False,
        default=list,
        max_length=100,
        help_text="Every entry's backends where the file names none.",
    )
    prefix = serializers.CharField(
        max_length=300,
        required=False,
        default="",
        allow_blank=True,
        help_text="skip-dict: put before its file names, e.g. test/xpu/.",
    )
    dry_run = serializers.BooleanField(
        required=False, default=False, help_text="Report what would change; write nothing."
    )
    prune = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Delete the list's exemptions the file no longer has (default: report them).",
    )


class ImportLineSerializer(serializers.Serializer):
    where = serializers.CharField(help_text="Where in the file.")
    match = serializers.CharField(help_text="The pattern over test IDs it became.")
    action = serializers.ChoiceField(choices=["created", "updated", "unchanged", "not imported"])
    tests = serializers.IntegerField(help_text="The project's stored tests it covers.")
    why = serializers.CharField(allow_blank=True)


class UnreadSerializer(serializers.Serializer):
    where = serializers.CharField()
    why = serializers.CharField()


class RemovedSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The triage's id.")
    match = serializers.CharField()
    condition = serializers.CharField(allow_blank=True)


class ListImportReportSerializer(serializers.Serializer):
    source = serializers.CharField()
    dry_run = serializers.BooleanField()
    created = serializers.IntegerField()
    updated = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    not_imported = serializers.IntegerField()
    removed_from_list = serializers.IntegerField(
        help_text="The source's exemptions the file no longer has."
    )
    pruned = serializers.BooleanField(help_text="Those were deleted (prune).")
    matched = ImportLineSerializer(many=True, help_text="Entries covering stored tests.")
    unmatched = ImportLineSerializer(
        many=True, help_text="Entries not imported, or covering no stored test yet, and why."
    )
    unread = UnreadSerializer(many=True, help_text="Parts of the file no entry came from.")
    removed = RemovedSerializer(many=True)


class ListExportQuery(serializers.Serializer):
    backend = serializers.CharField(
        max_length=50, required=False, help_text="Those that apply on this backend."
    )
    kind = serializers.ChoiceField(choices=TriageKind.choices, required=False)
    source = serializers.CharField(
        max_length=200,
        required=False,
        allow_blank=True,
        help_text="Only those from this source (import:amd-csv); empty: those made in parity.",
    )
