from django.core.management.base import BaseCommand

from parity.management.arguments import project_argument
from parity.services.projects import upload_token_create


class Command(BaseCommand):
    help = "Create an upload token for a project and print it (it is shown only once)."

    def add_arguments(self, parser):
        parser.add_argument("project")
        parser.add_argument("--label", default="")

    def handle(self, *args, **options):
        project = project_argument(options["project"])
        self.stdout.write(upload_token_create(project=project, label=options["label"]))
