"""The triage queue: a project's untracked open gaps as the decisions they stand for. Most
untracked gaps come in blocks (a backend's CI never runs a whole test file; one skip reason
covers hundreds of tests), so the queue groups them by (backend, file) and by (backend, reason),
largest first, each with its state mix and first seen; one exemption settles a group.

Also the overview's headline per backend (tests missing, in how many files; untracked
reasons) and the burn-down of untracked gaps per backend, from the snapshots.

"Untracked" as everywhere: open, neither tracked nor intended, and not ``reference_missing``
(outside the score)."""

import datetime
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace

from django.db.models import Count, F, Q, QuerySet
from psycopg2 import sql

from parity.definitions import untracked_q
from parity.models import Backend, BackendState, Gap, GapState, Project, Reason, TestCase
from parity.models.sql import table
from parity.read_replica import read_cursor
from parity.selectors.classification import skip_rules_current
from parity.selectors.owners import files_owners, gaps_owned, groups_owners
from parity.selectors.snapshot_days import snapshot_days

GROUPS_PER_PAGE = 50


@dataclass(frozen=True)
class QueueGroup:
    """Untracked open gaps of one backend sharing a file, or a reason."""

    backend: str
    file: str | None  # the file of a file group
    reason_id: int | None  # the reason of a reason group
    reason: str | None  # its text
    gaps: int
    missing: int
    skipped: int
    failed: int
    error: int
    first_seen: datetime.datetime
    # The group's skip category: its reason's (a skip reason's), or, for a file group, the one
    # the project's file rules give the file; "" when none does.
    category: str = ""
    disposition: str = ""
    # Code owners of the group's file, or of the files its reason's gaps are in (by name).
    owners: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The group as the queue's bulk form names it (backends are slugs: no "::")."""
        what = self.file if self.file is not None else f"#{self.reason_id}"
        return f"{self.backend}::{what}"


@dataclass(frozen=True)
class GroupPage:
    groups: list[QueueGroup]
    total: int  # groups in all pages
    number: int
    pages: int

    @property
    def has_next(self) -> bool:
        return self.number < self.pages

    @property
    def has_previous(self) -> bool:
        return self.number > 1


@dataclass(frozen=True)
class TriageQueue:
    by_file: GroupPage
    by_reason: GroupPage
    headlines: list["BackendHeadline"]  # each backend's (``backend``'s, when given)

    @property
    def untracked(self) -> int:
        return sum(h.untracked for h in self.headlines)


def untracked_gaps(*, projects: list[Project], backend: str | None = None) -> QuerySet[Gap]:
    """The open gaps nobody has triaged (of ``backend``, when given)."""
    gaps = Gap.objects.filter(untracked_q(), project__in=projects, is_open=True)
    gaps = gaps.exclude(state=GapState.REFERENCE_MISSING)
    return gaps.filter(backend__name=backend) if backend else gaps


def triage_queue(
    *,
    project: Project,
    backend: str | None = None,
    file_page: int = 1,
    reason_page: int = 1,
    per_page: int = GROUPS_PER_PAGE,
    owner: str | None = None,
) -> TriageQueue:
    """Untracked open gaps (of the files ``owner`` owns, when given) grouped by (backend, file)
    and by (backend, reason), largest first, a page of each with their code owners, and the
    backends' headlines; a reason group carries its reason's skip category, a file group the
    one the project's file rules give. Six queries: a page of each grouping (Postgres groups
    every gap, sorts the groups and sends a page, with how many there are), the owners of
    each page's groups, the skip rules, and the headlines: those the engine stored on the
    snapshots, or, of an owner's files, counted."""
    gaps = untracked_gaps(projects=[project], backend=backend)
    if owner:
        gaps = gaps_owned(gaps, project=project, owner=owner)
    by_file = _groups_page(gaps, _BY_FILE, project, file_page, per_page)
    # Tests a backend never ran have no reason: their decisions are the file groups'.
    with_reason = gaps.filter(reason__isnull=False)
    by_reason = _groups_page(with_reason, _BY_REASON, project, reason_page, per_page)
    if owner:
        headlines = _headlines_counted(gaps)
    else:
        headlines = triage_headlines(projects=[project]).get(project.pk, [])
        headlines = [h for h in headlines if backend is None or h.backend == backend]
    return TriageQueue(
        by_file=_owners_of_files(project, _files_classified(project, by_file)),
        by_reason=_owners_of_reasons(project, with_reason, by_reason),
        headlines=headlines,
    )


def _owners_of_files(project: Project, page: GroupPage) -> GroupPage:
    owners = files_owners(project=project, files=[g.file for g in page.groups])
    groups = [replace(g, owners=tuple(owners.get(g.file, ()))) for g in page.groups]
    return replace(page, groups=groups)


def _owners_of_reasons(project: Project, gaps: QuerySet[Gap], page: GroupPage) -> GroupPage:
    shown = gaps.filter(reason_id__in=sorted({g.reason_id for g in page.groups}))
    owners = groups_owners(shown, project=project, by=("backend__name", "reason_id"))
    groups = [
        replace(g, owners=tuple(owners.get((g.backend, g.reason_id), ()))) for g in page.groups
    ]
    return replace(page, groups=groups)


# A page of groups of the gaps (an ORM query's SQL) by backend and ``{what}``, largest first
# (ties by backend name, then what), with how many groups there are in all (``total``).
_GROUPS_SQL = """
    SELECT b.name, x.what, x.n, x.first_seen, x.missing, x.skipped, x.failed, x.error,
           x.total {extra}
    FROM (
        SELECT g.backend_id, {what} AS what, count(*) AS n, min(g.opened_at) AS first_seen,
               count(*) FILTER (WHERE g.state = 'missing') AS missing,
               count(*) FILTER (WHERE g.state = 'skipped') AS skipped,
               count(*) FILTER (WHERE g.state = 'failed') AS failed,
               count(*) FILTER (WHERE g.state = 'error') AS error,
               count(*) OVER () AS total
        FROM ({gaps}) g {join}
        GROUP BY g.backend_id, {what}
    ) x
    JOIN {backend} b ON b.id = x.backend_id {extra_join}
    ORDER BY x.n DESC, b.name, x.what
    LIMIT %s OFFSET %s
    """


def _file_group(row: tuple) -> QueueGroup:
    name, file, n, first_seen, missing, skipped, failed, error = row[:8]
    return QueueGroup(
        backend=name, file=file, reason_id=None, reason=None, gaps=n, missing=missing,
        skipped=skipped, failed=failed, error=error, first_seen=first_seen,
    )  # fmt: skip


def _reason_group(row: tuple) -> QueueGroup:
    name, reason_id, n, first_seen, missing, skipped, failed, error = row[:8]
    text, category, disposition = row[9:]
    return QueueGroup(
        backend=name, file=None, reason_id=reason_id, reason=text, gaps=n, missing=missing,
        skipped=skipped, failed=failed, error=error, first_seen=first_seen,
        category=category or "", disposition=disposition or "",
    )  # fmt: skip


@dataclass(frozen=True)
class _Grouping:
    what: str  # the column grouped by beside the backend, of the gaps ``g`` and ``join``
    group: Callable[[tuple], QueueGroup]  # a row as a group
    join: str = ""
    extra: str = ""  # more columns of each group of the page, of ``extra_join``
    extra_join: str = ""


# The project's tests alone are hashed for the join (``%s``: the project), not every project's.
_BY_FILE = _Grouping(
    what="t.file",
    group=_file_group,
    join="JOIN {test} t ON t.id = g.test_id AND t.project_id = %s",
)
_BY_REASON = _Grouping(
    what="g.reason_id",
    group=_reason_group,
    extra=", r.text, r.category, r.disposition",
    extra_join="JOIN {reason} r ON r.id = x.what",
)


def _groups_page(
    gaps: QuerySet[Gap], grouping: _Grouping, project: Project, number: int, per_page: int
) -> GroupPage:
    """A page of the groups of ``gaps`` (largest first). One query; two for a page past the
    end (a stale link), which shows the first."""
    tables = {"backend": table(Backend), "test": table(TestCase), "reason": table(Reason)}
    fields = ("backend_id", "test_id", "state", "opened_at", "reason_id")
    gaps_sql, params = gaps.values(*fields).query.sql_with_params()
    params = [*params, *([project.pk] if "%s" in grouping.join else [])]
    statement = sql.SQL(_GROUPS_SQL).format(
        what=sql.SQL(grouping.what),
        gaps=sql.SQL(gaps_sql),
        join=sql.SQL(grouping.join).format(**tables),
        extra=sql.SQL(grouping.extra),
        extra_join=sql.SQL(grouping.extra_join).format(**tables),
        backend=tables["backend"],
    )
    number = max(number, 1)
    with read_cursor() as cursor:
        cursor.execute(statement, [*params, per_page, (number - 1) * per_page])
        rows = cursor.fetchall()
        if not rows and number > 1:
            number = 1
            cursor.execute(statement, [*params, per_page, 0])
            rows = cursor.fetchall()
    total = rows[0][8] if rows else 0
    return GroupPage(
        groups=[grouping.group(row) for row in rows],
        total=total,
        number=number,
        pages=max(1, -(-total // per_page)),
    )


def _files_classified(project: Project, page: GroupPage) -> GroupPage:
    """The page's file groups with the category the project's file rules give their file
    (tests a backend never ran have no message: only a rule on the file can say why). One
    query, the rules; the classifying is the page's, so it costs the same at any size."""
    rules = skip_rules_current(project=project)
    groups = []
    for group in page.groups:
        found = rules.classify(file=group.file)
        groups.append(replace(group, category=found.category, disposition=found.disposition))
    return replace(page, groups=groups)


@dataclass(frozen=True)
class BackendHeadline:
    """What a backend lacks, untriaged: "neuron: 809 tests missing, in 41 files; 12 untracked
    reasons"."""

    backend: str
    untracked: int
    never_run: int  # untracked missing gaps: tests the backend's run lacks
    never_run_files: int
    reasons: int  # distinct reasons of its untracked gaps


def triage_headlines(*, projects: list[Project]) -> dict[int, list[BackendHeadline]]:
    """Per project pk, a headline per backend with untracked gaps, by name. One query: the
    counts the engine stored on each backend's current snapshot (``parity.engine.snapshots``,
    recounted at each recompute and triage change), not a count over every open gap."""
    rows = (
        BackendState.objects.filter(
            project__in=projects,
            snapshot__run_id=F("current_run_id"),
            snapshot__queue_gaps__gt=0,
        )
        .order_by("project_id", "backend__name")
        .values_list(
            "project_id",
            "backend__name",
            "snapshot__queue_gaps",
            "snapshot__queue_missing",
            "snapshot__queue_missing_files",
            "snapshot__queue_reasons",
        )
    )
    headlines: dict[int, list[BackendHeadline]] = defaultdict(list)
    for project_id, name, untracked, never_run, never_run_files, reasons in rows:
        headlines[project_id].append(
            BackendHeadline(
                backend=name,
                untracked=untracked,
                never_run=never_run,
                never_run_files=never_run_files,
                reasons=reasons,
            )
        )
    return dict(headlines)


def _headlines_counted(gaps: QuerySet[Gap]) -> list[BackendHeadline]:
    """The headlines of ``gaps`` (an owner's share of the queue), by backend name. One query."""
    missing = Q(state=GapState.MISSING)
    counted = (
        gaps.order_by()
        .values_list("backend__name")
        .annotate(
            untracked=Count("pk"),
            never_run=Count("pk", filter=missing),
            never_run_files=Count("test__file", filter=missing, distinct=True),
            reasons=Count("reason_id", distinct=True),
        )
    )
    return [BackendHeadline(*row) for row in sorted(counted)]


@dataclass(frozen=True)
class BurnDown:
    """Untracked gaps per backend, one point per day with a snapshot (its day's last)."""

    days: list[datetime.date]  # every day any backend has a point, oldest first
    series: dict[str, list[tuple[datetime.date, int]]]  # backend -> (day, untracked), by day


def untracked_burndown(*, projects: list[Project], since: datetime.datetime) -> dict[int, BurnDown]:
    """Per project pk, its burn-down since ``since``. One query, bounded by days x backends
    (``snapshot_days``: each day's last snapshot). A snapshot keeps the count of when it was
    last computed: a current run's is recounted at each triage, older ones as their run left
    them."""
    references = tuple(p.reference_backend_id for p in projects if p.reference_backend_id)
    days = snapshot_days(
        project_ids=[p.pk for p in projects],
        since=since,
        fields=("untracked",),
        excluded_backends=references,
    )
    last: dict[int, dict[str, dict[datetime.date, int]]] = defaultdict(lambda: defaultdict(dict))
    for day in sorted(days, key=lambda d: (d.project_id, d.backend)):
        last[day.project_id][day.backend][day.at.date()] = day.values["untracked"]
    return {
        project_id: BurnDown(
            days=sorted({day for points in backends.values() for day in points}),
            series={name: sorted(points.items()) for name, points in backends.items()},
        )
        for project_id, backends in last.items()
    }
