from django.core.management.base import BaseCommand, CommandError

from parity.models import Project
from parity.services.suite_summaries import suite_summaries_rebuild


class Command(BaseCommand):
    help = (
        "Replay the stored suite summaries (the suites matrix, each suite's tier) from the "
        "runs of the last 90 days: after an upgrade that adds them, or a bulk import of runs."
    )

    def add_arguments(self, parser):
        parser.add_argument("slugs", nargs="*", help="Projects (default: every one).")

    def handle(self, *args, **options):
        projects = Project.objects.order_by("slug")
        if options["slugs"]:
            projects = projects.filter(slug__in=options["slugs"])
            missing = set(options["slugs"]) - set(projects.values_list("slug", flat=True))
            if missing:
                raise CommandError(f"No project {', '.join(sorted(missing))}.")
        for project in projects:
            written = suite_summaries_rebuild(project=project)
            self.stdout.write(f"{project.slug}: {written} suite summaries")
