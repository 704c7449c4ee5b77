from django.core.management.base import BaseCommand, CommandError

from parity.models import Project
from parity.services.projects import ProjectSetupError, project_save


class Command(BaseCommand):
    help = (
        "Change what a project compares: its default branch (whose complete runs count) or its "
        "reference backend. Parity is rebuilt from the runs that count then."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--default-branch", help="Branch whose runs parity compares.")
        parser.add_argument("--reference", help="The backend others are held to.")

    def handle(self, *args, **options):
        project = Project.objects.filter(slug=options["slug"]).first()
        if project is None:
            raise CommandError(f"No project '{options['slug']}'.")
        if options["default_branch"] is None and options["reference"] is None:
            raise CommandError("Give --default-branch, --reference or both.")
        if options["default_branch"] is not None:
            project.default_branch = options["default_branch"]
        if options["reference"] is not None:
            project.reference_backend = project.backend_named(options["reference"])
            if project.reference_backend is None:
                raise CommandError(
                    f"No backend '{options['reference']}' in {project.slug}: "
                    f"{project.backend_names()}."
                )
        try:
            rebuilt = project_save(project=project)
        except ProjectSetupError as exc:
            raise CommandError(str(exc)) from exc
        reference = project.reference_backend.name if project.reference_backend else "none"
        done = "rebuilt parity" if rebuilt else "nothing changed"
        self.stdout.write(
            f"{project.slug} compares branch {project.default_branch} against {reference}: {done}."
        )
