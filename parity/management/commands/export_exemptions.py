from django.core.management.base import BaseCommand

from parity.management.arguments import project_argument
from parity.models import TriageKind
from parity.pure.list_formats import FORMATS
from parity.selectors.list_exports import ExportQuery, exemptions_export


class Command(BaseCommand):
    help = (
        "Write a project's exemptions (those CI applies today) as one of the lists teams keep: "
        "parity's YAML, PyTorch's disabled-tests JSON, a set_test_configs block, a skip_dict, "
        "AMD's CSV, a deselect list (docs/lists.md). What a format cannot spell is named on "
        "stderr."
    )

    def add_arguments(self, parser):
        parser.add_argument("project")
        parser.add_argument("--format", choices=list(FORMATS), required=True)
        parser.add_argument("--backend", help="Those that apply on this backend.")
        parser.add_argument("--kind", choices=TriageKind.values)
        parser.add_argument(
            "--source", help="Only those from this source (e.g. import:amd-csv; '': made here)."
        )
        parser.add_argument("--output", "-o", help="A file to write (default: stdout).")

    def handle(self, *args, **options):
        project = project_argument(options["project"])
        query = ExportQuery(
            format=options["format"],
            backend=options["backend"],
            kind=options["kind"],
            source=options["source"],
        )
        export = exemptions_export(project=project, query=query)
        for skipped in export.skipped:
            self.stderr.write(f"not written: {skipped.where}: {skipped.why}")
        if options["output"]:
            with open(options["output"], "w", encoding="utf-8", newline="") as out:
                out.write(export.text)
            self.stderr.write(f"{export.written} exemption(s) written to {options['output']}.")
        else:
            self.stdout.write(export.text, ending="")
