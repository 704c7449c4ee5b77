from django.core.management.base import BaseCommand, CommandError

from parity.services.projects import ProjectSetupError, project_create


class Command(BaseCommand):
    help = "Create a project with its backends and reference backend."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--backends", required=True, help="Comma-separated: cpu,gpu,tpu")
        parser.add_argument("--reference", required=True, help="The backend others are held to.")
        parser.add_argument("--issue-url-template", default="", help=".../issues/{number}")
        parser.add_argument("--name", default="")
        parser.add_argument(
            "--default-branch", default="main", help="Branch whose runs parity compares."
        )
        parser.add_argument(
            "--visibility",
            choices=["public", "private"],
            help="public: anyone may read it; private: its members only "
            "(default: PARITY_DEFAULT_VISIBILITY, private unless set).",
        )

    def handle(self, *args, **options):
        try:
            project = project_create(
                slug=options["slug"],
                backends=options["backends"].split(","),
                reference=options["reference"],
                issue_url_template=options["issue_url_template"],
                name=options["name"],
                default_branch=options["default_branch"],
                visibility=options["visibility"],
            )
        except ProjectSetupError as exc:
            raise CommandError(str(exc)) from exc
        backends = ", ".join(project.backends.values_list("name", flat=True))
        self.stdout.write(
            f"Created {project.visibility} project {project.slug} (backends: {backends})."
        )
