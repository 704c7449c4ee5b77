from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from parity.management.arguments import score_arguments, variant_keys_argument
from parity.models import Project
from parity.services.projects import ProjectSetupError, project_save, project_score_set

SCORE_OPTIONS = ("score_definition", "score_counts_intended", "score_counts_not_applicable")


class Command(BaseCommand):
    help = (
        "Change what a project compares: its default branch (whose complete runs count) or its "
        "reference backend (parity is rebuilt from the runs that count then), what its headline "
        "score counts (its current snapshots are recounted) and what makes its variants."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--default-branch", help="Branch whose runs parity compares.")
        parser.add_argument("--reference", help="The backend others are held to.")
        score_arguments(parser)

    def handle(self, *args, **options):
        project = Project.objects.filter(slug=options["slug"]).first()
        if project is None:
            raise CommandError(f"No project '{options['slug']}'.")
        given = ("default_branch", "reference", "variant_keys", *SCORE_OPTIONS)
        if all(options[name] is None for name in given):
            raise CommandError(
                "Give --default-branch, --reference, --variant-keys or a --score-… option."
            )
        if options["default_branch"] is not None:
            project.default_branch = options["default_branch"]
        if options["reference"] is not None:
            project.reference_backend = project.backend_named(options["reference"])
            if project.reference_backend is None:
                raise CommandError(
                    f"No backend '{options['reference']}' in {project.slug}: "
                    f"{project.backend_names()}."
                )
        keys = variant_keys_argument(options["variant_keys"])
        if keys is not None:
            project.variant_keys = keys
            try:
                project.clean()
            except ValidationError as exc:
                raise CommandError("; ".join(exc.messages)) from exc
        try:
            rebuilt = project_save(project=project)
        except ProjectSetupError as exc:
            raise CommandError(str(exc)) from exc
        if any(options[name] is not None for name in SCORE_OPTIONS):
            project = project_score_set(
                project=project,
                definition=options["score_definition"],
                counts_intended=options["score_counts_intended"],
                counts_not_applicable=options["score_counts_not_applicable"],
            )
        reference = project.reference_backend.name if project.reference_backend else "none"
        done = "rebuilt parity" if rebuilt else "nothing changed"
        self.stdout.write(
            f"{project.slug} compares branch {project.default_branch} against {reference}: {done}."
        )
        if keys is not None or any(options[name] is not None for name in SCORE_OPTIONS):
            self.stdout.write(
                f"{project.slug} scores the {project.score_settings().label}; variant keys: "
                f"{', '.join(project.variant_keys) or 'none'}."
            )
