"""What management commands read from their arguments, with the one message each refusal gets."""

from pathlib import Path

from django.core.management.base import CommandError

from parity.models import Project


def project_argument(slug: str) -> Project:
    """The project ``slug`` names, or a CommandError saying there is none."""
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise CommandError(f"Unknown project '{slug}'.")
    return project


def text_argument(path: Path) -> str:
    """The text of the file ``path``, or a CommandError saying why it cannot be read."""
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(f"Cannot read {path}: {exc}") from exc
