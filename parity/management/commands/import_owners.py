from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from parity.management.arguments import project_argument, text_argument
from parity.services.owners import OwnersRejected, owners_import


class Command(BaseCommand):
    help = (
        "Import a project's code owners from a CODEOWNERS file (GitHub's syntax) or a YAML of "
        "path patterns -> owners (FILE ending in .yaml or .yml). The new rules replace the "
        "old ones, and every test file's owners are matched again (docs/owners.md)."
    )

    def add_arguments(self, parser):
        parser.add_argument("project")
        parser.add_argument("file", type=Path)
        parser.add_argument(
            "--root",
            default="",
            help="Where the project's test file paths start inside the repository, when not "
            "at its root (tests stored as test_ops.py, kept in the repository as "
            "test/test_ops.py: --root test).",
        )

    def handle(self, *args, **options):
        project = project_argument(options["project"])
        path: Path = options["file"]
        text = text_argument(path)
        try:
            imported = owners_import(
                project=project, text=text, name=path.name, root=options["root"]
            )
        except OwnersRejected as exc:
            raise CommandError(f"{path}: {exc} Nothing was imported.") from exc
        for line in imported.skipped:
            self.stderr.write(f"line {line.line} skipped: {line.why} ({line.text})")
        self.stdout.write(
            f"{imported.rules} rule(s) imported into {project.slug}: {imported.owned} of "
            f"{imported.files} test file(s) have owners."
        )
