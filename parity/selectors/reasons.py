"""Skip reasons: how many tests each covers on each backend's current run and how many gaps it
causes there against the reference (the skip reasons endpoint and the reasons page's table, from
``CurrentOutcome`` and open ``Gap`` rows), a reason's trend by day (the trend endpoint) and the
stacked trend of skipped tests per reason (the page's chart, both from ``ReasonDaily``).

Skips whose message says nothing have no reason row of their own (``reason`` is NULL): they are
counted apart, as "no reason given", the first thing to triage. Expected failures (xfail) are
skip reasons whose text says so (``parity.pure.normalize.is_expected_failure``)."""

import datetime
import operator
from collections import defaultdict
from dataclasses import dataclass
from functools import reduce

from django.db.models import (
    Count,
    DateField,
    ExpressionWrapper,
    OuterRef,
    Q,
    Subquery,
    Value,
)

from parity.definitions import triages_in_force, untracked_q
from parity.models import (
    CurrentOutcome,
    Gap,
    GapState,
    Outcome,
    Project,
    Reason,
    ReasonDaily,
    Triage,
)
from parity.models.reasons import ReasonKind
from parity.pure.normalize import expected_failure_reason, is_expected_failure
from parity.pure.skip_rules import NO_REASON
from parity.selectors.fragments import IssueInfo, issue_infos

OTHER = "other"


@dataclass(frozen=True)
class SkipReason:
    id: int
    reason: str
    backends: dict[str, int]  # every backend of the project: tests it skips there
    gaps: dict[str, int]  # every backend: its open gaps against the reference with this reason
    untriaged: dict[str, int]  # of those, the gaps no issue tracks and no triage calls intended
    issues: list[str]  # urls, else keys
    issue_details: list[IssueInfo]  # the same issues, with their titles and states
    tracked: bool
    intended: bool
    first_seen: datetime.datetime
    last_seen: datetime.datetime
    category: str = ""  # by the project's skip rules; "": none matched
    disposition: str = "unknown"

    @property
    def xfail(self) -> bool:
        """An expected failure's reason, not a skip's (it still counts as a skip)."""
        return is_expected_failure(self.reason)

    @property
    def common(self) -> bool:
        """It causes no gap: it skips nothing the reference passes (say, on every backend)."""
        return not any(self.gaps.values())

    @property
    def untracked(self) -> bool:
        """It causes gaps no issue tracks and no triage calls intended (none tracks or marks
        the whole reason; gaps triaged one by one, by a test or an exemption, do not count)."""
        return not (self.tracked or self.intended) and any(self.untriaged.values())


@dataclass(frozen=True)
class NoReason:
    """Skips whose message gave no reason."""

    backends: dict[str, int]  # every backend: tests skipped with no reason there
    gaps: dict[str, int]  # every backend: open gaps they cause
    untriaged: dict[str, int]  # of those, the gaps no issue tracks and no triage calls intended


@dataclass(frozen=True)
class SkipReasons:
    reasons: list[SkipReason]
    no_reason: NoReason


def skip_reasons_current(*, project: Project) -> SkipReasons:
    """Skip reasons of the current runs, the most gaps first, then the most tests; every
    backend has a count; and the skips with no reason. Six queries."""
    found = _skip_reasons(project)
    ordered = sorted(
        found.reasons,
        key=lambda r: (-sum(r.gaps.values()), -sum(r.backends.values()), r.reason),
    )
    return SkipReasons(reasons=ordered, no_reason=found.no_reason)


@dataclass(frozen=True)
class ReasonRow:
    id: int | None  # None: the skips that gave no reason
    text: str  # "" for the skips that gave no reason
    backends: list[str]  # the page's backends, in its order
    counts: list[int]  # tests, per backend in the page's backend order
    gaps: list[int]  # open gaps it causes, per backend in the page's order
    total: int  # tests (on ``backend`` when the page chose one)
    gap_total: int  # gaps (on ``backend`` when the page chose one)
    untriaged_total: int  # of those, the gaps no issue tracks and no triage calls intended
    issues: list[IssueInfo]
    tracked: bool
    intended: bool
    first_seen: datetime.datetime | None
    last_seen: datetime.datetime | None
    category: str  # by the project's skip rules; "" when none matched
    disposition: str  # intended, needs_work, infra or unknown

    @property
    def per_backend(self) -> list[tuple[str, int, int]]:
        """(backend, tests, gaps) per backend, in the page's order."""
        return list(zip(self.backends, self.counts, self.gaps, strict=True))

    @property
    def xfail(self) -> bool:
        return self.id is not None and is_expected_failure(self.text)

    @property
    def given(self) -> str:
        """What the reason says: for an expected failure, its words after "expected failure";
        "" when the skip or xfail gave none."""
        return expected_failure_reason(self.text) if self.xfail else self.text

    @property
    def status(self) -> str:
        """intended, tracked, common (causes no gap), triaged (each gap it causes is tracked or
        intended on its own: by its test or an exemption) or untracked."""
        if self.intended:
            return "intended"
        if self.tracked:
            return "tracked"
        if not self.gap_total:
            return "common"
        return "untracked" if self.untriaged_total else "triaged"


# ``?sort=`` columns of the reasons table: a row's value to sort by (rows without one last).
REASON_SORTS = {
    "reason": lambda r: r.given.lower() or None,
    "category": lambda r: r.category.lower() or None,
    "gaps": lambda r: r.gap_total,
    "first": lambda r: r.first_seen,
    "last": lambda r: r.last_seen,
}


def skip_reason_rows(
    *, project: Project, backends: list[str], backend: str | None = None, sort: str = ""
) -> list[ReasonRow]:
    """Reasons with their tests and gaps per backend (only those on ``backend`` when given).
    By default skips that gave no reason first (the first to fix, gaps or not: nothing says
    why they skip), then the reasons causing the most gaps, untracked before tracked before intended
    among equals, then the most tests; or by ``sort`` (``REASON_SORTS``, ``-`` first:
    descending). Six queries."""
    found = _skip_reasons(project)
    empty = found.no_reason
    rows = [
        _row(None, "", empty.backends, empty.gaps, empty.untriaged, backends, backend),
        *(
            _row(r.id, r.reason, r.backends, r.gaps, r.untriaged, backends, backend, r)
            for r in found.reasons
        ),
    ]
    rows = [row for row in rows if row.total]
    rows.sort(
        key=lambda r: (
            bool(r.given),
            -r.gap_total,
            r.intended,
            r.tracked,
            -r.total,
            r.text,
        )
    )
    value = REASON_SORTS.get(sort.removeprefix("-"))
    if value is None:
        return rows
    # A stable sort: equal values keep the default order; rows without a value go last.
    rest = [r for r in rows if value(r) is not None]
    rest.sort(key=value, reverse=sort.startswith("-"))
    return rest + [r for r in rows if value(r) is None]


def _row(
    pk: int | None,
    text: str,
    tests: dict[str, int],
    gaps: dict[str, int],
    untriaged: dict[str, int],
    backends: list[str],
    backend: str | None,
    reason: SkipReason | None = None,
) -> ReasonRow:
    counts = [tests.get(name, 0) for name in backends]
    gap_counts = [gaps.get(name, 0) for name in backends]
    untriaged_counts = [untriaged.get(name, 0) for name in backends]
    return ReasonRow(
        id=pk,
        text=text,
        backends=backends,
        counts=counts,
        gaps=gap_counts,
        total=tests.get(backend, 0) if backend else sum(counts),
        gap_total=gaps.get(backend, 0) if backend else sum(gap_counts),
        untriaged_total=untriaged.get(backend, 0) if backend else sum(untriaged_counts),
        issues=reason.issue_details if reason else [],
        tracked=reason.tracked if reason else False,
        intended=reason.intended if reason else False,
        first_seen=reason.first_seen if reason else None,
        last_seen=reason.last_seen if reason else None,
        category=reason.category if reason else NO_REASON.category,
        disposition=reason.disposition if reason else NO_REASON.disposition,
    )


def _skip_reasons(project: Project) -> SkipReasons:
    """Each skip reason of the current runs (and the skips with none) with its tests and gaps
    per backend, its issues and whether a triage of the whole reason tracks it or marks it
    intended."""
    names = dict(project.backends.values_list("pk", "name"))
    tests, _ = _per_reason_and_backend(
        names,
        CurrentOutcome.objects.filter(project=project, outcome=Outcome.SKIPPED).filter(
            Q(reason__kind=ReasonKind.SKIP) | Q(reason__isnull=True)
        ),
    )
    # A skip's gap is a skipped gap with the backend's reason; the reference has none.
    gaps, untriaged = _per_reason_and_backend(
        names,
        Gap.objects.filter(project=project, is_open=True, state=GapState.SKIPPED),
        where=untracked_q(),
    )
    no_reason = NoReason(
        backends=tests.pop(None), gaps=gaps.pop(None), untriaged=untriaged.pop(None)
    )
    reasons = Reason.objects.filter(pk__in=tests).prefetch_related("issues")
    triages = _reason_triages(project, list(tests))
    return SkipReasons(
        reasons=[
            _skip_reason(r, tests[r.pk], gaps[r.pk], untriaged[r.pk], triages.get(r.pk, []))
            for r in reasons
        ],
        no_reason=no_reason,
    )


Counts = dict[int | None, dict[str, int]]


def _per_reason_and_backend(
    names: dict[int, str], rows, *, where: Q | None = None
) -> tuple[Counts, Counts]:
    """Rows counted per reason (None: none) and backend name, every backend with a count: all
    of them, and those ``where`` holds for (all again when None). One query."""
    counts: Counts = defaultdict(lambda: dict.fromkeys(names.values(), 0))
    some: Counts = defaultdict(lambda: dict.fromkeys(names.values(), 0))
    rows = rows.values_list("reason_id", "backend_id").annotate(
        n=Count("pk"), m=Count("pk", filter=where) if where is not None else Count("pk")
    )
    for reason_id, backend_id, n, m in rows:
        counts[reason_id][names[backend_id]] = n
        some[reason_id][names[backend_id]] = m
    counts[None], some[None]  # the no-reason counts exist, zero or not
    return counts, some


def _reason_triages(project: Project, reason_ids: list[int]) -> dict[int, list[Triage]]:
    """Triages of whole reasons on every backend (a one-backend triage is shown on gaps)."""
    triages = defaultdict(list)
    query = (
        Triage.objects.filter(project=project, reason_id__in=reason_ids, backends__isnull=True)
        .filter(triages_in_force())
        .select_related("issue")
    )
    for triage in query:
        triages[triage.reason_id].append(triage)
    return triages


def _skip_reason(
    reason: Reason,
    counts: dict[str, int],
    gaps: dict[str, int],
    untriaged: dict[str, int],
    triages: list[Triage],
) -> SkipReason:
    details = issue_infos(reason=reason, triage=None)
    for triage in triages:
        details += issue_infos(reason=None, triage=triage)
    details = list({issue.key: issue for issue in details}.values())
    issues = list(dict.fromkeys(issue.ref for issue in details))
    intended = any(t.kind == "intended" for t in triages)
    return SkipReason(
        id=reason.pk,
        reason=reason.text,
        backends=counts,
        gaps=gaps,
        untriaged=untriaged,
        issues=issues,
        issue_details=details,
        tracked=bool(issues) and not intended,
        intended=intended,
        first_seen=reason.first_seen,
        last_seen=reason.last_seen,
        category=reason.category,
        disposition=reason.disposition,
    )


@dataclass(frozen=True)
class TrendDay:
    day: datetime.date
    backends: dict[str, int]


TREND_DAYS = 90


def reason_trend(*, project: Project, reason: Reason, days: int = TREND_DAYS) -> list[TrendDay]:
    """Per day of the reason's last ``days`` days with counts (up to the latest), how many
    tests it covered in each backend's current run that day (0 for a backend with no count
    that day). Bounded, so its cost does not grow with the project's history."""
    names = dict(project.backends.values_list("pk", "name"))
    by_day: dict[datetime.date, dict[str, int]] = defaultdict(
        lambda: dict.fromkeys(names.values(), 0)
    )
    latest = ReasonDaily.objects.filter(reason=reason).order_by("-day").values("day")[:1]
    window_start = ExpressionWrapper(
        Subquery(latest) - Value(datetime.timedelta(days=days - 1)), output_field=DateField()
    )
    rows = ReasonDaily.objects.filter(reason=reason, day__gte=window_start).values_list(
        "day", "backend_id", "count"
    )
    for day, backend_id, count in rows:
        by_day[day][names[backend_id]] = count
    return [TrendDay(day=day, backends=by_day[day]) for day in sorted(by_day)]


@dataclass(frozen=True)
class ReasonSeries:
    name: str
    reason: int | None  # None for "other", and for a category's series
    counts: list[int]  # per day
    disposition: str = ""  # a category's series: its disposition
    rest: bool = False  # "other" reasons, or the uncategorized ones: drawn in grey


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
    by_category: bool = False,
) -> ReasonChart:
    """Skipped tests per reason (or per category of reason, ``by_category``) and day over the
    last ``days`` days, summed over the backends (or one). A backend's count on a day is that
    of its latest ``ReasonDaily`` day on or before it: the current run stays current until the
    next one. Three queries, a fourth when a backend ran before the window, and by category
    one more, the reasons' categories; their cost is bounded by the window, not by the
    history."""
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
    if by_category:
        return _category_series(totals, dates)
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
        series.append(ReasonSeries(name=name, reason=None, counts=other, rest=True))
    return ReasonChart(days=dates, series=series)


def _category_series(totals: dict[int, list[int]], dates: list[datetime.date]) -> ReasonChart:
    """Per category of the reasons (as their last classification gave it), the sum of their
    counts; every category, biggest first, "uncategorized" last. One query."""
    shown = [r for r in totals if sum(totals[r])]
    found = Reason.objects.filter(pk__in=shown).values_list("pk", "category", "disposition")
    by_category: dict[str, list[int]] = defaultdict(lambda: [0] * len(dates))
    dispositions = {"": "unknown"}
    for pk, category, disposition in found if shown else ():
        dispositions.setdefault(category, disposition)
        by_category[category] = [
            a + b for a, b in zip(by_category[category], totals[pk], strict=True)
        ]
    ranked = sorted(by_category, key=lambda c: (c == "", -sum(by_category[c]), c))
    series = [
        ReasonSeries(
            name=category or "uncategorized",
            reason=None,
            counts=by_category[category],
            disposition=dispositions[category],
            rest=not category,
        )
        for category in ranked
    ]
    return ReasonChart(days=dates, series=series)
