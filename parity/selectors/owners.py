"""Code owners as pages read them: from the ``FileOwners`` roll-up (a row per test file, written
at import and by the engine for files that appear later; docs/owners.md), never by matching
patterns at read. A file without a row (a project with no owners imported, a test only an
old or a pull request's run named) has no owner.

An owner is named as the project's CODEOWNERS names it (``@user``, ``@org/team``, an email),
compared without case; ``owner_clean`` makes a query string's spelling the stored one."""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.postgres.fields import ArrayField
from django.db.models import CharField, OuterRef, QuerySet, Subquery

from parity.models import (
    FileOwners,
    Gap,
    GapState,
    OwnerRule,
    OwnersSource,
    Project,
    TestCase,
)
from parity.models.owners import OWNER_CHARS
from parity.models.sql import model_sql
from parity.read_replica import read_cursor


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


def gaps_owners_attach(gaps: Iterable[Gap], *, project: Project) -> None:
    """Give each gap (read with its test) ``file_owners``, its file's owners ([] for none).
    One query for all, after a page or a batch is read: as an annotation of the list's query,
    Postgres looked the owners up for every open gap before sorting and cutting the page."""
    gaps = list(gaps)
    owners = files_owners(project=project, files={gap.test.file for gap in gaps})
    for gap in gaps:
        gap.file_owners = owners.get(gap.test.file, [])


def files_owners(*, project: Project, files: Iterable[str] | None = None) -> dict[str, list[str]]:
    """The owners of ``files`` (every file's, when None) that have any. One query."""
    rows = FileOwners.objects.filter(project=project).exclude(owners=[])
    if files is not None:
        rows = rows.filter(file__in=sorted(set(files)))
    return dict(rows.values_list("file", "owners"))


def groups_owners(
    gaps: QuerySet[Gap], *, project: Project, by: tuple[str, ...]
) -> dict[tuple, list[str]]:
    """Per group of ``gaps`` (of ``project``) by the fields ``by`` (the triage queue's reason
    groups), the owners of the files its gaps are in, each once, by name. One query, its rows
    one per group and distinct owner list."""
    owners_of_file = FileOwners.objects.filter(
        project_id=OuterRef("project_id"), file=OuterRef("test__file")
    ).values("owners")[:1]
    # Only the gaps of owned files' tests look their owners up (a reason's groups hold tens of
    # thousands of gaps, most often in files nobody owns; with no owners, none is read).
    owned = FileOwners.objects.filter(project=project).exclude(owners=[]).values("file")
    tests = TestCase.objects.filter(project=project, file__in=owned).values("pk")
    rows = (
        gaps.order_by()
        .filter(test_id__in=tests)
        .annotate(file_owners=Subquery(owners_of_file, output_field=ArrayField(CharField())))
        .values_list(*by, "file_owners")
    )
    owners: dict[tuple, set[str]] = defaultdict(set)
    for *key, names in rows.distinct():
        owners[tuple(key)].update(names or ())
    return {key: sorted(names) for key, names in owners.items() if names}


@dataclass(frozen=True)
class OwnerCounts:
    owner: str
    files: int  # test files it owns
    open: int  # open gaps in them (not reference_missing: outside the score)
    untracked: int


@dataclass(frozen=True)
class OwnersSummary:
    """The owners page: what was imported, how much of the project it covers, each owner."""

    source: OwnersSource | None  # None: no import yet
    rules: list[OwnerRule]
    files: int  # test files the roll-up knows
    owned: int  # of them, those some rule gives owners
    owners: list[OwnerCounts]  # the most untracked gaps first
    unowned_open: int  # open gaps in files no rule gives an owner


# Counted per file first (a few hundred rows), then per owner.
_OWNER_GAPS_SQL = model_sql(
    """
    WITH files AS (
        SELECT t.file, count(*) AS n,
               count(*) FILTER (WHERE NOT g.tracked AND NOT g.intended) AS untracked
        FROM {gap} g JOIN {test} t ON t.id = g.test_id
        WHERE g.project_id = %(project)s AND g.is_open AND g.state <> %(outside)s
        GROUP BY t.file
    )
    SELECT u.owner, sum(f.n)::int, sum(f.untracked)::int
    FROM files f
    LEFT JOIN {owners} o ON o.project_id = %(project)s AND o.file = f.file
    CROSS JOIN unnest(coalesce(nullif(o.owners, '{{}}'), ARRAY[''])) u(owner)  -- '': no owner
    GROUP BY u.owner
    """,
    gap=Gap,
    test=TestCase,
    owners=FileOwners,
)


def owners_summary(*, project: Project) -> OwnersSummary:
    """What the owners page shows. Four queries: the import, its rules, the files' owners, and
    the open gaps per owner (one GROUP BY over the gaps joined to their files' owners)."""
    source = OwnersSource.objects.filter(project=project).first()
    rules = list(OwnerRule.objects.filter(project=project).order_by("position"))
    files: dict[str, int] = defaultdict(int)
    known = owned = 0
    for names in FileOwners.objects.filter(project=project).values_list("owners", flat=True):
        known += 1
        owned += bool(names)
        for name in names:
            files[name] += 1
    with read_cursor() as cursor:
        cursor.execute(
            _OWNER_GAPS_SQL, {"project": project.pk, "outside": GapState.REFERENCE_MISSING}
        )
        gaps = {owner: (n, untracked) for owner, n, untracked in cursor.fetchall()}
    counts = [
        OwnerCounts(
            owner=name, files=n, open=gaps.get(name, (0, 0))[0], untracked=gaps.get(name, (0, 0))[1]
        )
        for name, n in files.items()
    ]
    counts.sort(key=lambda c: (-c.untracked, -c.open, c.owner))
    return OwnersSummary(
        source=source,
        rules=rules,
        files=known,
        owned=owned,
        owners=counts,
        unowned_open=gaps.get("", (0, 0))[0],
    )
