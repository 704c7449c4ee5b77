from django.core.management.base import BaseCommand, CommandError

from parity.management.arguments import score_arguments, variant_keys_argument
from parity.services.projects import ProjectSetupError, project_create, project_score_set


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
        score_arguments(parser)

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
                variant_keys=variant_keys_argument(options["variant_keys"]),
            )
        except ProjectSetupError as exc:
            raise CommandError(str(exc)) from exc
        project = project_score_set(
            project=project,
            definition=options["score_definition"],
            counts_intended=options["score_counts_intended"],
            counts_not_applicable=options["score_counts_not_applicable"],
        )
        backends = ", ".join(project.backends.values_list("name", flat=True))
        self.stdout.write(
            f"Created {project.visibility} project {project.slug} (backends: {backends}; "
            f"score: {project.score_settings().label}; variant keys: "
            f"{', '.join(project.variant_keys) or 'none'})."
        )
