"""Why a gap a verdict reports as uncovered is untracked now, though its baseline had it
covered (``parity.result_reads.verdict``'s ``_uncovered``): the exemption that covered it

- lapsed: its condition held for the baseline's attributes and does not for the run's
  ("condition rocm < 7.14 no longer holds");
- expired: its expiry day passed since the baseline ran ("expired 2026-12-01");
- was removed since the baseline started: a maintainer deleted it or set a declaration aside,
  which ``parity.services.triage`` records as an ``ExemptionRemoval`` ("removed by alice on
  2026-12-03", "set aside by bob on ...").

A removed triage is gone from the triages the SQL picks from, so its record is matched here,
in Python, to the gaps no triage covers now: by its test, its reason or its pattern, on its
backends (a family's covers its variants), unexpired and its condition holding as the baseline
was. Only when some removal came since the baseline started (most runs: none, no query)."""

import datetime
from dataclasses import dataclass

from django.utils import timezone

from parity.definitions import triages_expired_between, unexpired
from parity.models import Backend, ExemptionRemoval, Run, Triage
from parity.pure.attributes import condition_applies
from parity.pure.globs import key_matches

LAPSED, EXPIRED, REMOVED = "lapsed", "expired", "removed"


@dataclass(frozen=True)
class Cause:
    cause: str  # lapsed, expired or removed
    why: str  # what the verdict says of it, e.g. "expired 2026-12-01"


def baseline_day(baseline: Run) -> datetime.date:
    """The day an exemption had to be unexpired on to cover the baseline (UTC, as
    ``TRIAGE_UNEXPIRED``'s CURRENT_DATE)."""
    return baseline.started_at.astimezone(datetime.UTC).date()


def expired_since(*, project_id: int, baseline: Run) -> bool:
    """Whether some triage of the project expired after the baseline's day: one query."""
    today = timezone.now().date()
    return Triage.objects.filter(
        triages_expired_between(baseline_day(baseline), today), project_id=project_id
    ).exists()


def removals_since(*, project_id: int, baseline: Run) -> list[ExemptionRemoval]:
    """The project's triages removed since the baseline started, newest first."""
    return list(
        ExemptionRemoval.objects.filter(project_id=project_id, removed_at__gt=baseline.started_at)
        .select_related("removed_by")
        .order_by("-removed_at", "-pk")
    )


def triage_cause(triage: Triage | None, *, lapsed: set[int]) -> Cause:
    """Why ``triage``, which covered the gap for the baseline and does not for the run, no longer
    does: it lapsed for the run's attributes, or it expired since."""
    if triage is None:
        return Cause(LAPSED, "")
    if triage.pk not in lapsed and not unexpired(triage.expires_on, timezone.now().date()):
        return Cause(EXPIRED, f"expired {triage.expires_on.isoformat()}")
    return Cause(LAPSED, f"condition {triage.condition} no longer holds")


def removal_covering(
    removals: list[ExemptionRemoval],
    *,
    backend: Backend,
    test_id: int,
    key: str,
    reason_id: int | None,
    day: datetime.date,
    attributes: dict,
) -> ExemptionRemoval | None:
    """The newest of ``removals`` that covered this gap of ``backend`` for the baseline (its day
    and attributes), or None."""
    for r in removals:
        named = (
            r.test_id == test_id
            or (r.reason_id is not None and r.reason_id == reason_id)
            or (r.match_regex and key_matches(r.match_regex, key))
        )
        on_backend = not r.backends or backend.pk in r.backends or backend.family_id in r.backends
        holds = not r.condition or condition_applies(r.condition, attributes)
        if named and on_backend and unexpired(r.expires_on, day) and holds:
            return r
    return None


def removal_cause(removal: ExemptionRemoval) -> Cause:
    """E.g. "removed by alice on 2026-12-03"; who is left out when not known."""
    who = f" by {removal.removed_by.get_username()}" if removal.removed_by else ""
    day = removal.removed_at.astimezone(datetime.UTC).date().isoformat()
    return Cause(REMOVED, f"{removal.how}{who} on {day}")
