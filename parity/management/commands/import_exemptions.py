import logging
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from parity.management.arguments import project_argument, repo_path, text_argument
from parity.models import Project
from parity.pure.list_formats import FORMATS, ListFormatError
from parity.pure.list_formats.parity_file import (
    KINDS,
    ExemptionFileError,
    disabled_dict_entries,
    document_load,
    exemptions_parse,
)
from parity.services.list_imports import ListFile, ListImportReport, list_file_import
from parity.services.triage import TriageRejected, exemptions_import

LIST_FORMATS = [name for name in FORMATS if name != "yaml"]


class Command(BaseCommand):
    help = (
        "Import a list of exemptions into a project. --format yaml (the default): parity's "
        "format (match, backends, kind, reason, issue, expires), all or none, or with "
        "--pytorch-disabled a PyTorch-style per-backend dict; entries the project already has "
        "are left alone. The other formats are the lists teams keep (docs/lists.md): each "
        "entry imported or reported with why not, again and again without duplicates."
    )

    def add_arguments(self, parser):
        parser.add_argument("project")
        parser.add_argument("file", type=Path)
        parser.add_argument("--format", choices=["yaml", *LIST_FORMATS], default="yaml")
        parser.add_argument(
            "--dry-run", action="store_true", help="Report what would change; write nothing."
        )
        parser.add_argument(
            "--prune",
            action="store_true",
            help="Delete this list's exemptions the file no longer has (default: report them).",
        )
        parser.add_argument(
            "--source", default="", help="Record the list under this source (docs/lists.md)."
        )
        parser.add_argument(
            "--repo-root",
            type=Path,
            default=None,
            help="The repository FILE is in: its source names FILE relative to it (default: "
            "the nearest folder above FILE holding .git).",
        )
        parser.add_argument(
            "--backend",
            action="append",
            default=[],
            help="Every entry's backend, where the file names none (repeatable).",
        )
        parser.add_argument(
            "--condition", default="", help="Every entry's condition, e.g. 'arch == arc'."
        )
        parser.add_argument(
            "--prefix", default="", help="skip-dict: put before its file names, e.g. test/xpu/."
        )
        parser.add_argument(
            "--pytorch-disabled",
            action="store_true",
            help="FILE is {hardware: {TestClass: {test_name: reason}}} (DISABLED_TORCH_TESTS).",
        )
        parser.add_argument(
            "--kind",
            choices=KINDS,
            default=None,
            help="Every entry's kind (default: intended with --pytorch-disabled; the format's "
            "own otherwise).",
        )

    def handle(self, *args, **options):
        # Its summary and report are the output; the services' progress logs (INFO) would only
        # interleave with them on stderr. -v 2 shows them.
        if options["verbosity"] >= 2:
            return self._import(options)
        previous = logging.root.manager.disable
        logging.disable(logging.INFO)
        try:
            return self._import(options)
        finally:
            logging.disable(previous)

    def _import(self, options):
        project = project_argument(options["project"])
        path: Path = options["file"]
        text = text_argument(path)
        if options["format"] != "yaml":
            self._list(project, path, text, options)
            return
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
        kind = options["kind"] or "intended"
        converted = disabled_dict_entries(data, project=project, kind=kind)
        for line in converted.unconverted:
            self.stderr.write(f"not imported: {line}")
        return converted.entries

    def _list(self, project: Project, path: Path, text: str, options) -> None:
        file = ListFile(
            format=options["format"],
            text=text,
            name=repo_path(path, options["repo_root"]),
            source=options["source"],
            kind=options["kind"] or "",
            condition=options["condition"],
            backends=tuple(options["backend"]),
            prefix=options["prefix"],
        )
        try:
            report = list_file_import(
                project=project, file=file, dry_run=options["dry_run"], prune=options["prune"]
            )
        except (ListFormatError, TriageRejected) as exc:
            raise CommandError(f"{path}: {exc} Nothing was imported.") from exc
        self._report(project, report)

    def _report(self, project: Project, report: ListImportReport) -> None:
        for unread in report.unread:
            self.stderr.write(f"not read: {unread.where}: {unread.why}")
        for line in report.unmatched:
            self.stderr.write(f"{line.action}: {line.where} {line.match}: {line.why}")
        for removed in report.removed:
            done = "deleted" if report.pruned and not report.dry_run else "no longer listed"
            self.stderr.write(f"{done}: triage {removed.id} {removed.match}")
        covered = sum(line.tests for line in report.matched)
        would = "would be " if report.dry_run else ""
        self.stdout.write(
            f"{report.source} into {project.slug}: {report.count('created')} {would}created, "
            f"{report.count('updated')} {would}updated, {report.count('unchanged')} unchanged, "
            f"{report.count('not imported')} not imported, {len(report.removed)} no longer "
            f"listed; {len(report.matched)} entries cover {covered} stored test(s)."
        )
