"""What management commands read from their arguments, with the one message each refusal gets."""

import argparse
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


def score_arguments(parser) -> None:
    """The options that set what a project's headline score counts (docs/scores.md) and what
    makes its variants (docs/variants.md): create_project and update_project take the same."""
    from parity.models.projects import ScoreDefinition

    parser.add_argument(
        "--score-definition",
        choices=ScoreDefinition.values,
        help="What the headline score counts (docs/scores.md); default reference_passing.",
    )
    parser.add_argument(
        "--score-counts-intended",
        action=argparse.BooleanOptionalAction,
        help="Count intended gaps against a backend in the headline.",
    )
    parser.add_argument(
        "--score-counts-not-applicable",
        action=argparse.BooleanOptionalAction,
        help="Count tests declared not applicable against a backend in the headline.",
    )
    parser.add_argument(
        "--variant-keys",
        help="Comma-separated attribute names that make a backend's variants, e.g. arch or "
        "arch,os (default arch; empty: none).",
    )


def variant_keys_argument(value: str | None) -> list[str] | None:
    """``--variant-keys``: "arch,os" -> ["arch", "os"]; "" -> []; None: not given."""
    if value is None:
        return None
    return [key.strip() for key in value.split(",") if key.strip()]


def repo_path(path: Path, root: Path | None = None) -> str:
    """``path`` as the repository that holds it names it (``test/xpu/conf.py``), so a list's
    source is the same from every checkout and CI machine: relative to ``root`` when given,
    else to the nearest folder above it holding ``.git``; a relative path with no repository
    above it stays as given. Never an absolute machine path: without a repository, the file's
    name."""
    resolved = path.resolve()
    if root is None:
        root = next((p for p in resolved.parents if (p / ".git").exists()), None)
    if root is not None:
        try:
            return resolved.relative_to(root.resolve()).as_posix()
        except ValueError:
            raise CommandError(f"{path} is not inside the repository {root}.") from None
    return path.as_posix() if not path.is_absolute() else path.name
