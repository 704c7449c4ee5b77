from django.core.management.base import BaseCommand, CommandError

from parity.engine import project_recompute
from parity.models import Project


class Command(BaseCommand):
    help = (
        "Rebuild a project's gaps, snapshots and roll-ups from its current runs, e.g. after "
        "its reference backend or default branch changed."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")

    def handle(self, *args, **options):
        project = Project.objects.filter(slug=options["slug"]).first()
        if project is None:
            raise CommandError(f"No project '{options['slug']}'.")
        project_recompute(project=project)
        self.stdout.write(f"Recomputed parity of {project.slug}.")
