from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from parity.management.arguments import project_argument, text_argument
from parity.models import Project
from parity.pure.exemption_files import (
    KINDS,
    ExemptionFileError,
    disabled_dict_entries,
    document_load,
    exemptions_parse,
)
from parity.services.triage import TriageRejected, exemptions_import


class Command(BaseCommand):
    help = (
        "Import a list of exemptions into a project, all or none: parity's format (YAML or "
        "JSON: match, backends, kind, reason, issue, expires) or, with --pytorch-disabled, "
        "a PyTorch-style per-backend dict of disabled tests. Entries the project already has "
        "are left alone."
    )

    def add_arguments(self, parser):
        parser.add_argument("project")
        parser.add_argument("file", type=Path)
        parser.add_argument(
            "--pytorch-disabled",
            action="store_true",
            help="FILE is {hardware: {TestClass: {test_name: reason}}} (DISABLED_TORCH_TESTS).",
        )
        parser.add_argument(
            "--kind",
            choices=KINDS,
            default="intended",
            help="With --pytorch-disabled: the kind of every entry (default: intended).",
        )

    def handle(self, *args, **options):
        project = project_argument(options["project"])
        path: Path = options["file"]
        text = text_argument(path)
        try:
            entries = self._entries(project, text, options)
            imported = exemptions_import(project=project, entries=entries)
        except (ExemptionFileError, TriageRejected) as exc:
            raise CommandError(f"{path}: {exc} Nothing was imported.") from exc
        self.stdout.write(
            f"{len(imported.created)} exemption(s) imported into {project.slug}; "
            f"{imported.duplicates} already there."
        )

    def _entries(self, project: Project, text: str, options):
        data = document_load(text)
        if not options["pytorch_disabled"]:
            return exemptions_parse(data)
        converted = disabled_dict_entries(data, project=project, kind=options["kind"])
        for line in converted.unconverted:
            self.stderr.write(f"not imported: {line}")
        return converted.entries
