"""Which reasons gained or lost an issue link during a week.

A reason's links (``Reason.issues``, plus the issues of tracked triages of the whole reason, as
the reasons page shows them) keep no history, so the weekly run records them per project at the
start of each week (``ReasonLinksRecord``, written by ``parity.digest.services``). A week's
changes compare the record at its start with the one at its end, or with the links now while
no record of its end exists yet (the current week; the week just ended before its digest ran).
Reads only.
"""

from collections import defaultdict
from dataclasses import dataclass

from parity.models import Reason, ReasonDaily, ReasonLinksRecord, Triage, TriageKind
from parity.pure.weeks import Week

Links = dict[str, dict[str, str]]  # reason id (a string: JSON keys) -> issue key -> url


@dataclass(frozen=True)
class IssueLink:
    key: str
    url: str


@dataclass(frozen=True)
class LinkChange:
    reason_id: int
    reason: str
    gained: list[IssueLink]
    lost: list[IssueLink]


def reason_links_now(*, project_id: int) -> Links:
    links: Links = defaultdict(dict)
    through = Reason.issues.through.objects.filter(reason__project_id=project_id)
    rows = list(through.values_list("reason_id", "trackingissue__key", "trackingissue__url"))
    triages = Triage.objects.filter(
        project_id=project_id, kind=TriageKind.TRACKED, reason__isnull=False, backends__isnull=True
    )
    rows += triages.values_list("reason_id", "issue__key", "issue__url")
    for reason_id, key, url in rows:
        links[str(reason_id)][key] = url
    return dict(links)


def link_changes(
    *, project_id: int, week: Week, backend_ids: list[int] | None = None
) -> list[LinkChange] | None:
    """Reasons whose issue links changed during ``week``, by reason text; None when nothing
    recorded the links at the week's start (the first digest of a project). With
    ``backend_ids``, only reasons seen on those backends' current runs."""
    records = dict(
        ReasonLinksRecord.objects.filter(
            project_id=project_id, week__in=[week.monday, week.next.monday]
        ).values_list("week", "links")
    )
    if week.monday not in records:
        return None
    before = records[week.monday]
    after = records.get(week.next.monday)
    if after is None:
        after = reason_links_now(project_id=project_id)
    changed = {
        int(reason_id)
        for reason_id in before.keys() | after.keys()
        if before.get(reason_id, {}).keys() != after.get(reason_id, {}).keys()
    }
    reasons = Reason.objects.filter(pk__in=changed)
    if backend_ids:
        seen = ReasonDaily.objects.filter(reason_id__in=changed, backend_id__in=backend_ids)
        reasons = reasons.filter(pk__in=seen.values("reason_id"))
    changes = []
    for reason_id, text in reasons.values_list("pk", "text"):
        old, new = before.get(str(reason_id), {}), after.get(str(reason_id), {})
        changes.append(
            LinkChange(
                reason_id=reason_id,
                reason=text,
                gained=[IssueLink(k, new[k]) for k in sorted(new.keys() - old.keys())],
                lost=[IssueLink(k, old[k]) for k in sorted(old.keys() - new.keys())],
            )
        )
    return sorted(changes, key=lambda c: (c.reason, c.reason_id))
