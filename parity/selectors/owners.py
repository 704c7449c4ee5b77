"""Code owners as pages read them: from the ``FileOwners`` roll-up (a row per test file, written
at import and by the engine for files that appear later; docs/owners.md), never by matching
patterns at read. A file without a row (a project with no owners imported, a test only an
old or a pull request's run named) has no owner.

An owner is named as the project's CODEOWNERS names it (``@user``, ``@org/team``, an email),
compared without case; ``owner_clean`` makes a query string's spelling the stored one."""

from collections import defaultdict
from collections.abc import Iterable

from django.contrib.postgres.fields import ArrayField
from django.db.models import CharField, OuterRef, QuerySet, Subquery

from parity.models import FileOwners, Gap, Project
from parity.models.owners import OWNER_CHARS


def owner_clean(owner: str | None) -> str:
    """``owner`` as stored: stripped, lower-cased ('' for none)."""
    return (owner or "").strip().lower()[:OWNER_CHARS]


def owned_files(*, project: Project, owner: str) -> QuerySet[FileOwners]:
    """The files ``owner`` owns, as a subquery of their paths (``test__file__in=``)."""
    return FileOwners.objects.filter(project=project, owners__contains=[owner_clean(owner)]).values(
        "file"
    )


def gaps_owned(gaps: QuerySet[Gap], *, project: Project, owner: str) -> QuerySet[Gap]:
    """``gaps`` of the test files ``owner`` owns."""
    return gaps.filter(test__file__in=owned_files(project=project, owner=owner))


def gap_owners() -> Subquery:
    """An annotation of a ``Gap`` queryset: the owners of the gap's test file (None when the
    roll-up has no row for it). One index probe per row, no query of its own."""
    rows = FileOwners.objects.filter(project_id=OuterRef("project_id"), file=OuterRef("test__file"))
    return Subquery(rows.values("owners")[:1], output_field=ArrayField(CharField()))


def files_owners(*, project: Project, files: Iterable[str] | None = None) -> dict[str, list[str]]:
    """The owners of ``files`` (every file's, when None) that have any. One query."""
    rows = FileOwners.objects.filter(project=project).exclude(owners=[])
    if files is not None:
        rows = rows.filter(file__in=sorted(set(files)))
    return dict(rows.values_list("file", "owners"))


def groups_owners(gaps: QuerySet[Gap], *, by: tuple[str, ...]) -> dict[tuple, list[str]]:
    """Per group of ``gaps`` by the fields ``by`` (the triage queue's reason groups), the owners
    of the files its gaps are in, each once, by name. One query, its rows one per group and
    distinct owner list."""
    rows = gaps.order_by().annotate(file_owners=gap_owners()).values_list(*by, "file_owners")
    owners: dict[tuple, set[str]] = defaultdict(set)
    for *key, names in rows.distinct():
        owners[tuple(key)].update(names or ())
    return {key: sorted(names) for key, names in owners.items() if names}
