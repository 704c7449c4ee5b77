import json
from pathlib import Path

import yaml
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from parity.management.arguments import project_argument, text_argument
from parity.services.projects import project_rules_update


class Command(BaseCommand):
    help = "Replace a project's normalization rules with a JSON or YAML file (validated first)."

    def add_arguments(self, parser):
        parser.add_argument("project")
        parser.add_argument("file", type=Path)

    def handle(self, *args, **options):
        project = project_argument(options["project"])
        path: Path = options["file"]
        text = text_argument(path)
        try:
            data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        except (ValueError, yaml.YAMLError) as exc:
            raise CommandError(f"Cannot read {path}: {exc}") from exc
        if not isinstance(data, dict):
            raise CommandError(f"{path} must hold a mapping of rule names to values.")
        try:
            project_rules_update(project=project, rules=data)
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        self.stdout.write(
            f"Rules of {project.slug} updated. Run `manage.py reingest {project.slug}` "
            "to apply them to stored uploads."
        )
