"""The triage queue: a project's untracked open gaps as the decisions they stand for. Most
untracked gaps come in blocks (a backend's CI never runs a whole test file; one skip reason
covers hundreds of tests), so the queue groups them by (backend, file) and by (backend, reason),
largest first, each with its state mix and first seen; one exemption settles a group.

Also the overview's headline per backend (tests missing, in how many files; untracked
reasons) and the burn-down of untracked gaps per backend, from the snapshots.

"Untracked" as everywhere: open, neither tracked nor intended, and not ``reference_missing``
(outside the score)."""

import datetime
from collections import Counter, defaultdict
from dataclasses import dataclass, replace

from django.db.models import Count, F, Min, Q, QuerySet

from parity.definitions import untracked_q
from parity.models import BackendState, Gap, GapState, Project
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
    one the project's file rules give. Five queries: one GROUP BY each, reading every group
    (there are at most backends x files, and backends x reasons: the headlines are sums over
    them, and a page is a slice), the owners of each page's groups, and the skip rules."""
    gaps = untracked_gaps(projects=[project], backend=backend)
    if owner:
        gaps = gaps_owned(gaps, project=project, owner=owner)
    by_file = _groups(gaps, ("backend__name", "test__file"))
    # Tests a backend never ran have no reason: their decisions are the file groups'.
    with_reason = gaps.filter(reason__isnull=False)
    by_reason = _groups(
        with_reason,
        ("backend__name", "reason_id", "reason__text", "reason__category", "reason__disposition"),
    )
    files: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for group in by_file:
        files[group.backend].append((group.gaps, group.missing))
    reasons = Counter(g.backend for g in by_reason)
    headlines = [_headline(name, files[name], reasons[name]) for name in sorted(files)]
    file_groups = _page(by_file, file_page, per_page)
    reason_groups = _page(by_reason, reason_page, per_page)
    return TriageQueue(
        by_file=_owners_of_files(project, _files_classified(project, file_groups)),
        by_reason=_owners_of_reasons(with_reason, reason_groups),
        headlines=headlines,
    )


def _owners_of_files(project: Project, page: GroupPage) -> GroupPage:
    owners = files_owners(project=project, files=[g.file for g in page.groups])
    groups = [replace(g, owners=tuple(owners.get(g.file, ()))) for g in page.groups]
    return replace(page, groups=groups)


def _owners_of_reasons(gaps: QuerySet[Gap], page: GroupPage) -> GroupPage:
    shown = gaps.filter(reason_id__in=sorted({g.reason_id for g in page.groups}))
    owners = groups_owners(shown, by=("backend__name", "reason_id"))
    groups = [
        replace(g, owners=tuple(owners.get((g.backend, g.reason_id), ()))) for g in page.groups
    ]
    return replace(page, groups=groups)


def _groups(gaps: QuerySet[Gap], by: tuple[str, ...]) -> list[QueueGroup]:
    """Every group of ``gaps`` by the fields ``by``, largest first. One query."""
    states = {
        state: Count("pk", filter=Q(state=state))
        for state in (GapState.MISSING, GapState.SKIPPED, GapState.FAILED, GapState.ERROR)
    }
    rows = (
        gaps.order_by()
        .values(*by)
        .annotate(n=Count("pk"), first_seen=Min("opened_at"), **states)
        .order_by("-n", *by)
    )
    return [_group(row) for row in rows]


def _page(groups: list[QueueGroup], number: int, per_page: int) -> GroupPage:
    pages = max(1, -(-len(groups) // per_page))
    number = number if 1 <= number <= pages else 1  # past the end (a stale link): the first
    start = (number - 1) * per_page
    return GroupPage(
        groups=groups[start : start + per_page], total=len(groups), number=number, pages=pages
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
        category=row.get("reason__category") or "",
        disposition=row.get("reason__disposition") or "",
    )


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


def _headline(backend: str, files: list[tuple[int, int]], reasons: int) -> BackendHeadline:
    """``backend``'s headline from its file groups' (untracked gaps, of which never run)."""
    return BackendHeadline(
        backend=backend,
        untracked=sum(n for n, _ in files),
        never_run=sum(missing for _, missing in files),
        never_run_files=sum(1 for _, missing in files if missing),
        reasons=reasons,
    )


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
