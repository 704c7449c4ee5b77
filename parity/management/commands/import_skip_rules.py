from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from parity.management.arguments import project_argument, text_argument
from parity.pure.skip_rules import SkipRulesError, skip_rules_default, skip_rules_parse
from parity.selectors.classification import skip_rules_current
from parity.services.classification import skip_rules_replace


class Command(BaseCommand):
    help = (
        "Replace a project's skip-reason rules with a YAML (or JSON) file, or the default set, "
        "and re-classify its reasons (no re-ingest)."
    )

    def add_arguments(self, parser):
        parser.add_argument("project")
        parser.add_argument("file", type=Path, nargs="?", help="YAML rules; absent: --default")
        parser.add_argument("--default", action="store_true", help="the default rule set")

    def handle(self, *args, **options):
        project = project_argument(options["project"])
        path: Path | None = options["file"]
        if (path is None) == (not options["default"]):
            raise CommandError("Give a rules file or --default (not both).")
        try:
            rules = skip_rules_default() if path is None else skip_rules_parse(text_argument(path))
        except SkipRulesError as exc:
            raise CommandError(f"Cannot use {path or 'the default rules'}: {exc}") from exc
        changed = skip_rules_replace(project=project, rules=rules)
        version = skip_rules_current(project=project).version
        self.stdout.write(
            f"{len(rules.rules)} skip rules of {project.slug} (version {version}); "
            f"{changed} reasons changed category."
        )
