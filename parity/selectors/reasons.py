"""Skip reasons: how many tests each covers on each backend's current run (the skip reasons
endpoint and the reasons page's table, both from ``CurrentOutcome``), a reason's trend by day
(the trend endpoint) and the stacked trend of skipped tests per reason (the page's chart, both
from ``ReasonDaily``)."""

import datetime
import operator
from collections import defaultdict
from dataclasses import dataclass
from functools import reduce

from django.db.models import Count, OuterRef, Q, Subquery

from parity.models import CurrentOutcome, Outcome, Project, Reason, ReasonDaily, Triage
from parity.models.reasons import ReasonKind
from parity.selectors.fragments import issue_urls, triages_unexpired

OTHER = "other"


@dataclass(frozen=True)
class SkipReason:
    id: int
    reason: str
    backends: dict[str, int]  # every backend of the project
    issues: list[str]  # urls, else keys
    tracked: bool
    intended: bool
    first_seen: datetime.datetime
    last_seen: datetime.datetime


def skip_reasons_current(*, project: Project) -> list[SkipReason]:
    """Skip reasons of the current runs, most tests first; every backend has a count. Five
    queries."""
    reasons = _skip_reasons(project)
    return sorted(reasons, key=lambda r: (-sum(r.backends.values()), r.reason))


@dataclass(frozen=True)
class ReasonRow:
    id: int
    text: str
    counts: list[int]  # per backend, in the page's backend order
    total: int
    issues: list[str]  # urls, else keys
    tracked: bool
    intended: bool
    first_seen: datetime.datetime
    last_seen: datetime.datetime


def skip_reason_rows(
    *, project: Project, backends: list[str], backend: str | None = None
) -> list[ReasonRow]:
    """Reasons with their tests per backend (only ``backend``'s when given), untracked first,
    then tracked, then intended; most tests first within each. Five queries."""
    rows = []
    for reason in _skip_reasons(project):
        counts = [reason.backends.get(name, 0) for name in backends]
        total = reason.backends.get(backend, 0) if backend else sum(counts)
        if total == 0:
            continue
        rows.append(
            ReasonRow(
                id=reason.id,
                text=reason.reason,
                counts=counts,
                total=total,
                issues=reason.issues,
                tracked=reason.tracked,
                intended=reason.intended,
                first_seen=reason.first_seen,
                last_seen=reason.last_seen,
            )
        )
    return sorted(rows, key=lambda r: (r.intended, r.tracked, -r.total, r.text))


def _skip_reasons(project: Project) -> list[SkipReason]:
    """Each skip reason of the current runs with its tests per backend, its issues and whether
    a triage of the whole reason tracks it or marks it intended."""
    names = dict(project.backends.values_list("pk", "name"))
    counts: dict[int, dict[str, int]] = defaultdict(lambda: dict.fromkeys(names.values(), 0))
    rows = (
        CurrentOutcome.objects.filter(
            project=project, outcome=Outcome.SKIPPED, reason__kind=ReasonKind.SKIP
        )
        .values_list("reason_id", "backend_id")
        .annotate(n=Count("*"))
    )
    for reason_id, backend_id, n in rows:
        counts[reason_id][names[backend_id]] = n
    reasons = Reason.objects.filter(pk__in=counts).prefetch_related("issues")
    triages = _reason_triages(project, list(counts))
    return [_skip_reason(r, counts[r.pk], triages.get(r.pk, [])) for r in reasons]


def _reason_triages(project: Project, reason_ids: list[int]) -> dict[int, list[Triage]]:
    """Triages of whole reasons on every backend (a one-backend triage is shown on gaps)."""
    triages = defaultdict(list)
    query = (
        Triage.objects.filter(project=project, reason_id__in=reason_ids, backends__isnull=True)
        .filter(triages_unexpired())
        .select_related("issue")
    )
    for triage in query:
        triages[triage.reason_id].append(triage)
    return triages


def _skip_reason(reason: Reason, counts: dict[str, int], triages: list[Triage]) -> SkipReason:
    issues = issue_urls(reason=reason, triage=None)
    for triage in triages:
        issues += [url for url in issue_urls(reason=None, triage=triage) if url not in issues]
    intended = any(t.kind == "intended" for t in triages)
    return SkipReason(
        id=reason.pk,
        reason=reason.text,
        backends=counts,
        issues=issues,
        tracked=bool(issues) and not intended,
        intended=intended,
        first_seen=reason.first_seen,
        last_seen=reason.last_seen,
    )


@dataclass(frozen=True)
class TrendDay:
    day: datetime.date
    backends: dict[str, int]


def reason_trend(*, project: Project, reason: Reason) -> list[TrendDay]:
    """Per day, how many tests the reason covered in each backend's current run that day (0
    for a backend with no count that day)."""
    names = dict(project.backends.values_list("pk", "name"))
    days: dict[datetime.date, dict[str, int]] = defaultdict(
        lambda: dict.fromkeys(names.values(), 0)
    )
    rows = ReasonDaily.objects.filter(reason=reason).values_list("day", "backend_id", "count")
    for day, backend_id, count in rows:
        days[day][names[backend_id]] = count
    return [TrendDay(day=day, backends=days[day]) for day in sorted(days)]


@dataclass(frozen=True)
class ReasonSeries:
    name: str
    reason: int | None  # None for "other"
    counts: list[int]  # per day


@dataclass(frozen=True)
class ReasonChart:
    days: list[datetime.date]
    series: list[ReasonSeries]  # the top reasons, biggest first, then "other"


def skip_reason_chart(
    *,
    project: Project,
    backend: str | None = None,
    days: int = 28,
    top: int = 8,
    today: datetime.date | None = None,
) -> ReasonChart:
    """Skipped tests per reason and day over the last ``days`` days, summed over the backends
    (or one). A backend's count on a day is that of its latest ``ReasonDaily`` day on or before
    it: the current run stays current until the next one. Three queries, a fourth when a backend
    ran before the window; their cost is bounded by the window, not by the history."""
    today = today or datetime.datetime.now(datetime.UTC).date()
    start = today - datetime.timedelta(days=days - 1)
    backends = project.backends.filter(**({"name": backend} if backend else {}))
    # Each backend's last day before the window, the counts the window starts from: a LIMIT 1
    # on the (backend, day) index, so its cost does not depend on how many days came before.
    before = ReasonDaily.objects.filter(backend=OuterRef("pk"), day__lt=start).order_by("-day")
    anchors = dict(
        backends.annotate(last=Subquery(before.values("day")[:1])).values_list("pk", "last")
    )
    skips = ReasonDaily.objects.filter(reason__kind=ReasonKind.SKIP).values_list(
        "backend_id", "day", "reason_id", "count"
    )
    rows = list(skips.filter(backend_id__in=anchors, day__gte=start, day__lte=today))
    starts = [Q(backend_id=b, day=day) for b, day in anchors.items() if day is not None]
    if starts:
        rows += skips.filter(reduce(operator.or_, starts))
    by_day: dict[tuple[int, datetime.date], dict[int, int]] = defaultdict(dict)
    for backend_id, day, reason_id, count in rows:
        by_day[backend_id, day][reason_id] = count
    # History that begins inside the window starts the chart: no ramp up from days with no data.
    start = max(start, min((day for _, day in by_day), default=start))
    dates = [start + datetime.timedelta(days=n) for n in range((today - start).days + 1)]
    totals = _carried_totals(by_day, list(anchors), dates)
    return _top_series(totals, dates, top=top)


def _carried_totals(
    by_day: dict[tuple[int, datetime.date], dict[int, int]],
    backend_ids: list[int],
    dates: list[datetime.date],
) -> dict[int, list[int]]:
    """Per reason, per date, the sum over backends of each backend's counts then current."""
    totals: dict[int, list[int]] = defaultdict(lambda: [0] * len(dates))
    for backend_id in backend_ids:
        days = sorted(day for b, day in by_day if b == backend_id)
        current: dict[int, int] = {}
        next_day = 0
        for index, date in enumerate(dates):
            while next_day < len(days) and days[next_day] <= date:
                current = by_day[backend_id, days[next_day]]
                next_day += 1
            for reason_id, count in current.items():
                totals[reason_id][index] += count
    return totals


def _top_series(
    totals: dict[int, list[int]], dates: list[datetime.date], *, top: int
) -> ReasonChart:
    ranked = sorted(totals, key=lambda r: (-sum(totals[r]), r))
    ranked = [r for r in ranked if sum(totals[r])]
    shown, rest = ranked[:top], ranked[top:]
    texts = dict(Reason.objects.filter(pk__in=shown).values_list("pk", "text")) if shown else {}
    series = [ReasonSeries(name=texts[r], reason=r, counts=totals[r]) for r in shown]
    if rest:
        other = [sum(totals[r][i] for r in rest) for i in range(len(dates))]
        name = f"{OTHER} ({len(rest)} reasons)"
        series.append(ReasonSeries(name=name, reason=None, counts=other))
    return ReasonChart(days=dates, series=series)
