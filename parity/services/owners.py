"""Code owners: importing a project's ``CODEOWNERS`` file (GitHub's syntax) or YAML of path
patterns -> owners. ``import_owners`` and the Exemptions page's upload form both call
``owners_import``; the new rules replace the old ones whole, and every test file's owners are
matched again in the same transaction, under the project lock (a recompute adding the owners of
new files must not interleave with the rebuild)."""

import logging
from dataclasses import dataclass

from django.db import transaction

from parity.engine.owners import owners_rebuild
from parity.models import FileOwners, OwnerRule, OwnersSource, Project
from parity.models.projects import project_lock
from parity.pure.codeowners import OwnersError, Skipped, owners_parse, path_normalize

logger = logging.getLogger(__name__)

# GitHub reads CODEOWNERS files up to 3 MB; a big project's (PyTorch's) is a small fraction.
MAX_OWNERS_CHARS = 1_000_000


class OwnersRejected(ValueError):
    """A file that gives no rules; the message says why, and nothing was changed."""


@dataclass(frozen=True)
class OwnersImported:
    rules: int
    skipped: list[Skipped]  # lines not taken, as GitHub ignores them
    files: int  # test files matched
    owned: int  # of which some rule gives owners


def owners_import(*, project: Project, text: str, name: str, root: str = "") -> OwnersImported:
    """Replace ``project``'s owner rules with ``text``'s (YAML when ``name`` ends in .yaml or
    .yml, else CODEOWNERS) and match every test file of the project. ``root``: where the
    project's test paths start inside the repository ('' for its root)."""
    if len(text) > MAX_OWNERS_CHARS:
        raise OwnersRejected(f"The file has more than {MAX_OWNERS_CHARS:,} characters.")
    try:
        parsed = owners_parse(text, name=name)
    except OwnersError as error:
        raise OwnersRejected(str(error)) from error
    if not parsed.rules:
        why = f" (line {parsed.skipped[0].line}: {parsed.skipped[0].why})" if parsed.skipped else ""
        raise OwnersRejected(f"The file has no rule parity can read{why}.")
    with transaction.atomic():
        project_lock(project_id=project.pk)
        OwnersSource.objects.update_or_create(
            project=project,
            defaults={
                "name": name[:200],
                "text": text,
                "root": path_normalize(root).strip("/"),
                "skipped": [s.__dict__ for s in parsed.skipped],
            },
        )
        OwnerRule.objects.filter(project=project).delete()
        OwnerRule.objects.bulk_create(
            OwnerRule(
                project=project,
                position=position,
                line=rule.line,
                pattern=rule.pattern,
                owners=list(rule.owners),
                regex=rule.regex,
            )
            for position, rule in enumerate(parsed.rules)
        )
        files = owners_rebuild(project_id=project.pk)
        owned = FileOwners.objects.filter(project=project).exclude(owners=[]).count()
    logger.info(
        "owners of project %s imported from %s: %d rules, %d skipped, %d of %d files owned",
        project.pk,
        name,
        len(parsed.rules),
        len(parsed.skipped),
        owned,
        files,
    )
    return OwnersImported(rules=len(parsed.rules), skipped=parsed.skipped, files=files, owned=owned)
