import datetime

from django.core.management.base import BaseCommand, CommandError
from django.utils.dateparse import parse_date

from ingest.pipeline import BadUpload
from ingest.reingest import project_reingest
from parity.management.arguments import project_argument


class Command(BaseCommand):
    help = "Re-normalize a project's stored uploads after a rule change (atomically per run)."

    def add_arguments(self, parser):
        parser.add_argument("project")
        parser.add_argument("--since", help="Only runs started on or after this date (YYYY-MM-DD).")

    def handle(self, *args, **options):
        project = project_argument(options["project"])
        since = _since(options["since"]) if options["since"] else None
        try:
            summary = project_reingest(project=project, since=since)
        except BadUpload as exc:
            raise CommandError(f"Re-ingest stopped, that run is unchanged: {exc}") from exc
        self.stdout.write(
            f"Re-ingested {summary.runs} runs ({summary.uploads} uploads, {summary.results} "
            f"results); removed {summary.orphans_deleted} test IDs no result uses any more."
        )


def _since(text: str) -> datetime.datetime:
    day = parse_date(text)
    if day is None:
        raise CommandError(f"--since: '{text}' is not a date (YYYY-MM-DD).")
    return datetime.datetime.combine(day, datetime.time(), tzinfo=datetime.UTC)
