"""Skip reasons: the table of the current runs' reasons (``skip_reasons_current``, from
``CurrentOutcome``) and the stacked trend of skipped tests per reason (``ReasonDaily``)."""

import datetime
import operator
from collections import defaultdict
from dataclasses import dataclass
from functools import reduce

from django.db.models import OuterRef, Q, Subquery

from parity.models import Project, Reason, ReasonDaily
from parity.models.reasons import ReasonKind
from parity.selectors.dashboard.issues import IssueLink, issue_links
from parity.selectors.reasons import skip_reasons_current

OTHER = "other"


@dataclass(frozen=True)
class ReasonRow:
    id: int
    text: str
    counts: list[int]  # per backend, in the page's backend order
    total: int
    issues: list[IssueLink]
    tracked: bool
    intended: bool
    first_seen: datetime.datetime
    last_seen: datetime.datetime


def skip_reason_rows(
    *, project: Project, backends: list[str], backend: str | None = None
) -> list[ReasonRow]:
    """Reasons with their tests per backend (only ``backend``'s when given), untracked first,
    then tracked, then intended; most tests first within each."""
    rows = []
    for reason in skip_reasons_current(project=project):
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
                issues=issue_links(reason.issues),
                tracked=reason.tracked,
                intended=reason.intended,
                first_seen=reason.first_seen,
                last_seen=reason.last_seen,
            )
        )
    return sorted(rows, key=lambda r: (r.intended, r.tracked, -r.total, r.text))


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
    dates = [start + datetime.timedelta(days=n) for n in range(days)]
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
