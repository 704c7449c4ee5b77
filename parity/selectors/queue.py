"""The triage queue: a project's untracked open gaps as the decisions they stand for. Most
untracked gaps come in blocks (a backend's CI never runs a whole test file; one skip reason
covers hundreds of tests), so the queue groups them by (backend, file) and by (backend, reason),
largest first, each with its state mix and first seen; one exemption settles a group.

Also the overview's headline per backend (tests never run, in how many files; untracked
reasons) and the burn-down of untracked gaps per backend, from the snapshots.

"Untracked" as everywhere: open, neither tracked nor intended, and not ``reference_missing``
(outside the score)."""

import datetime
from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count, Min, Q, QuerySet, Window

from parity.models import Gap, GapState, Project, Snapshot

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
    gaps = Gap.objects.filter(
        project__in=projects, is_open=True, tracked=False, intended=False
    ).exclude(state=GapState.REFERENCE_MISSING)
    return gaps.filter(backend__name=backend) if backend else gaps


def triage_queue(
    *,
    project: Project,
    backend: str | None = None,
    file_page: int = 1,
    reason_page: int = 1,
    per_page: int = GROUPS_PER_PAGE,
) -> TriageQueue:
    """Untracked open gaps grouped by (backend, file) and by (backend, reason), largest first,
    a page of each, and the backends' headlines. Three queries, one GROUP BY each; a group's
    row carries the number of groups."""
    gaps = untracked_gaps(projects=[project], backend=backend)
    by_file = _groups(gaps, ("backend__name", "test__file"), file_page, per_page)
    # Tests a backend never ran have no reason: their decisions are the file groups'.
    with_reason = gaps.filter(reason__isnull=False)
    by_reason = _groups(
        with_reason, ("backend__name", "reason_id", "reason__text"), reason_page, per_page
    )
    headlines = triage_headlines(projects=[project], backend=backend).get(project.pk, [])
    return TriageQueue(by_file=by_file, by_reason=by_reason, headlines=headlines)


def _groups(gaps: QuerySet[Gap], by: tuple[str, ...], number: int, per_page: int) -> GroupPage:
    states = {
        state: Count("pk", filter=Q(state=state))
        for state in (GapState.MISSING, GapState.SKIPPED, GapState.FAILED, GapState.ERROR)
    }
    rows = (
        gaps.order_by()
        .values(*by)
        .annotate(
            n=Count("pk"),
            first_seen=Min("opened_at"),
            # The number of groups, on every row: no second query to paginate.
            groups=Window(Count("*")),
            **states,
        )
        .order_by("-n", *by)
    )
    number = max(1, number)
    page = list(rows[(number - 1) * per_page : number * per_page])
    if not page and number > 1:  # past the end (a stale link): the first page
        return _groups(gaps, by, 1, per_page)
    total = page[0]["groups"] if page else 0
    return GroupPage(
        groups=[_group(row) for row in page],
        total=total,
        number=number,
        pages=max(1, -(-total // per_page)),
    )


def _group(row: dict) -> QueueGroup:
    return QueueGroup(
        backend=row["backend__name"],
        file=row.get("test__file"),
        reason_id=row.get("reason_id"),
        reason=row.get("reason__text"),
        gaps=row["n"],
        missing=row[GapState.MISSING],
        skipped=row[GapState.SKIPPED],
        failed=row[GapState.FAILED],
        error=row[GapState.ERROR],
        first_seen=row["first_seen"],
    )


@dataclass(frozen=True)
class BackendHeadline:
    """What a backend lacks, untriaged: "neuron: 809 tests in 41 files never run; 12 untracked
    reasons"."""

    backend: str
    untracked: int
    never_run: int  # untracked missing gaps: tests the backend's run lacks
    never_run_files: int
    reasons: int  # distinct reasons of its untracked gaps


def triage_headlines(
    *, projects: list[Project], backend: str | None = None
) -> dict[int, list[BackendHeadline]]:
    """Per project pk, a headline per backend with untracked gaps (or ``backend``'s), by name.
    One query."""
    missing = Q(state=GapState.MISSING)
    rows = (
        untracked_gaps(projects=projects, backend=backend)
        .order_by()
        .values("project_id", "backend__name")
        .annotate(
            untracked=Count("pk"),
            never_run=Count("pk", filter=missing),
            never_run_files=Count("test__file", filter=missing, distinct=True),
            reasons=Count("reason_id", distinct=True),
        )
        .order_by("project_id", "backend__name")
    )
    headlines: dict[int, list[BackendHeadline]] = defaultdict(list)
    for row in rows:
        project_id = row.pop("project_id")
        headlines[project_id].append(BackendHeadline(backend=row.pop("backend__name"), **row))
    return dict(headlines)


@dataclass(frozen=True)
class BurnDown:
    """Untracked gaps per backend, one point per day with a snapshot (its day's last)."""

    days: list[datetime.date]  # every day any backend has a point, oldest first
    series: dict[str, list[tuple[datetime.date, int]]]  # backend -> (day, untracked), by day


def untracked_burndown(*, projects: list[Project], since: datetime.datetime) -> dict[int, BurnDown]:
    """Per project pk, its burn-down since ``since``. One query, bounded by the window (a
    snapshot per backend and run). A snapshot keeps the count of when it was last computed:
    a current run's is recounted at each triage, older ones as their run left them."""
    rows = (
        Snapshot.objects.filter(project__in=projects, at__gte=since)
        .exclude(
            backend_id__in=[p.reference_backend_id for p in projects if p.reference_backend_id]
        )
        .order_by("project_id", "backend__name", "at", "pk")
        .values_list("project_id", "backend__name", "at", "untracked")
    )
    last: dict[int, dict[str, dict[datetime.date, int]]] = defaultdict(lambda: defaultdict(dict))
    for project_id, backend, at, untracked in rows:
        last[project_id][backend][at.date()] = untracked  # the day's last snapshot wins
    return {
        project_id: BurnDown(
            days=sorted({day for points in backends.values() for day in points}),
            series={name: sorted(points.items()) for name, points in backends.items()},
        )
        for project_id, backends in last.items()
    }
