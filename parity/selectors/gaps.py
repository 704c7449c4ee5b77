"""Gap lists, read from the engine's ``Gap`` rows (open ones, or those closed since a date)."""

import datetime

from django.db.models import QuerySet

from parity.models import Gap, GapState, Project, Reason, Triage


def gaps_list(
    *,
    project: Project,
    backend: str | None = None,
    state: str | None = None,
    tracked: bool | None = None,
    intended: bool | None = None,
    since: datetime.datetime | None = None,
    closed_since: datetime.datetime | None = None,
) -> QuerySet[Gap]:
    """Open gaps, or with ``closed_since`` the gaps fixed since then.

    ``reference_missing`` rows (tests the reference does not run) are outside the score and
    listed only when asked for by ``state``. ``tracked=False`` means untracked: intended gaps
    are never untracked. ``since`` keeps gaps opened on or after it."""
    gaps = Gap.objects.filter(project=project)
    if closed_since is not None:
        gaps = gaps.filter(is_open=False, closed_at__gte=closed_since)
    else:
        gaps = gaps.filter(is_open=True)
    if since is not None:
        gaps = gaps.filter(opened_at__gte=since)
    if backend:
        gaps = gaps.filter(backend__name=backend)
    # Outside the score: listed only when asked for by name.
    gaps = gaps.filter(state=state) if state else gaps.exclude(state=GapState.REFERENCE_MISSING)
    if tracked is True:
        gaps = gaps.filter(tracked=True)
    elif tracked is False:
        gaps = gaps.filter(tracked=False, intended=False)
    if intended is not None:
        gaps = gaps.filter(intended=intended)
    return (
        gaps.select_related("backend", "test", "reason", "triage__issue")
        .prefetch_related("reason__issues")
        .order_by("backend__name", "test__key", "pk")
    )


def issue_urls(*, reason: Reason | None, triage: Triage | None) -> list[str]:
    """Where a gap is tracked: its reason's issues, then its triage's (url, else the key)."""
    issues = list(reason.issues.all()) if reason is not None else []
    if triage is not None and triage.issue is not None:
        issues.append(triage.issue)
    return list(dict.fromkeys(issue.url or issue.key for issue in issues))


def gap_is_stale(gap: Gap) -> bool:
    """A fixed gap whose triage now matches no open gap: the triage can be removed."""
    return not gap.is_open and gap.triage is not None and gap.triage.stale
