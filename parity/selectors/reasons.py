"""Skip reasons: how many tests each covers on each backend now, and its trend by day."""

import datetime
from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count

from parity.models import CurrentOutcome, Outcome, Project, Reason, ReasonDaily, Triage
from parity.models.reasons import ReasonKind
from parity.selectors.gaps import issue_urls


@dataclass(frozen=True)
class SkipReason:
    id: int
    reason: str
    backends: dict[str, int]
    issues: list[str]
    tracked: bool
    intended: bool
    first_seen: datetime.datetime
    last_seen: datetime.datetime


def skip_reasons_current(*, project: Project) -> list[SkipReason]:
    """Skip reasons of the current runs, most tests first; every backend has a count."""
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
    result = [_skip_reason(r, counts[r.pk], triages.get(r.pk, [])) for r in reasons]
    return sorted(result, key=lambda r: (-sum(r.backends.values()), r.reason))


def _reason_triages(project: Project, reason_ids: list[int]) -> dict[int, list[Triage]]:
    """Triages of whole reasons on every backend (a one-backend triage is shown on gaps)."""
    triages = defaultdict(list)
    query = Triage.objects.filter(
        project=project, reason_id__in=reason_ids, backend__isnull=True
    ).select_related("issue")
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
