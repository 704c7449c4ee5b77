"""Issue state sync: keep the state, title, labels, assignee and closing time of every tracking
issue that still matters (one an open gap cites, through its reason or its triage, or an
unexpired exemption cites) as its tracker says, and re-apply triages where a state change moves
gaps in or out of ``tracked_closed``.

One call is one beat tick (``parity.tasks.issues_sync``, every
``PARITY_TRACKER_SYNC_TICK_SECONDS``). Each tick reads its share of the issues, those read
longest ago (never read first), so that each is read about once per
``PARITY_TRACKER_SYNC_SECONDS`` and the requests spread over the period instead of bursting.
Requests are conditional (the stored ETag; a 304 costs GitHub no quota) and batched where the
tracker allows (GitLab: a hundred issues a request).

Faults leave what is stored as it was:

- a host answering a rate limit (403/429 with ``Retry-After`` or no quota left), or whose quota
  falls to ``PARITY_TRACKER_RATE_RESERVE``, is left alone until the time it gave (kept in the
  cache: losing it costs one request that is refused again); its other issues wait for a tick;
- a host erring (5xx, timeouts) is left for this tick; its issues keep their facts and note the
  error in ``sync_error``;
- an issue the tracker will not show (404, 410, no access) keeps its facts and says why;
- a host with no token in ``PARITY_TRACKER_TOKENS`` is not asked at all, and the log says so
  once per process.

No database transaction is open while a request is in flight; each answer is written as it
comes, so a tick cut short keeps what it read.
"""

import datetime
import logging
import math
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from parity.definitions import triages_unexpired
from parity.engine.gap_triages import triages_refresh
from parity.models import Gap, IssueState, Reason, TrackingIssue, Triage
from parity.models.projects import project_lock
from parity.storage.leases import lease_held, lease_holder
from parity.trackers import (
    Fetched,
    IssueAddress,
    RateLimited,
    TrackerUnavailable,
    issue_address,
    tracker_for,
)

logger = logging.getLogger(__name__)

# One sync at a time across workers (a slow tick and the next one): a lease, not an advisory
# lock, so it holds behind a transaction pooler (parity.storage.leases).
_SYNC_LEASE = "issue-sync"
_told_no_token: set[str] = set()  # hosts the log already named


@dataclass
class SyncReport:
    """What one tick did, for the log and for tests."""

    ran: bool = True  # False: another sync held the lock
    cited: int = 0  # distinct issues (by address) the sync could read
    due: int = 0  # of those, due for a read
    asked: int = 0  # read this tick (answered or not)
    read: int = 0  # answered with facts
    unchanged: int = 0  # answered 304
    failed: int = 0  # refused for this issue alone (404, no access)
    state_changes: int = 0
    requests: int = 0
    paused: dict[str, str] = field(default_factory=dict)  # host -> why it was left alone
    no_token: list[str] = field(default_factory=list)
    projects_refreshed: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class _Due:
    address: IssueAddress
    issue_ids: list[int]  # one row per project citing it
    etag: str
    synced_at: datetime.datetime | None


def cited_issues(*, today: datetime.date | None = None) -> QuerySet[TrackingIssue]:
    """Issues an open gap cites (its reason's, or its triage's) or an unexpired exemption does."""
    today = today or timezone.now().date()
    open_gap_of_reason = Gap.objects.filter(is_open=True, reason_id=OuterRef("reason_id"))
    by_reason = Reason.issues.through.objects.filter(trackingissue_id=OuterRef("pk")).filter(
        Exists(open_gap_of_reason)
    )
    by_gap_triage = Gap.objects.filter(is_open=True, triage__issue_id=OuterRef("pk"))
    by_exemption = Triage.objects.filter(issue_id=OuterRef("pk")).filter(triages_unexpired(today))
    return TrackingIssue.objects.filter(
        Exists(by_reason) | Exists(by_gap_triage) | Exists(by_exemption)
    )


def issues_sync(*, now: datetime.datetime | None = None) -> SyncReport:
    """One tick: read the due share of the cited issues, store what the trackers say, and
    re-apply triages in the projects where an issue opened or closed."""
    now = now or timezone.now()
    # Reads stop at 0.8 of a tick (_read); the rest covers re-applying triages. A worker that
    # dies holding it delays the next sync by at most this.
    lease_seconds = 2 * settings.PARITY_TRACKER_SYNC_TICK_SECONDS
    with lease_held(name=_SYNC_LEASE, seconds=lease_seconds) as held:
        if not held:
            logger.info(
                "issue sync: another sync is running (%s); this tick does nothing",
                lease_holder(name=_SYNC_LEASE),
            )
            return SyncReport(ran=False)
        report = SyncReport()
        due = _due(now, report)
        changed = _read(due, now, report)
        report.projects_refreshed = sorted(changed)
        for project_id in report.projects_refreshed:
            with transaction.atomic():
                triages_refresh(project=project_lock(project_id=project_id))
    logger.info(
        "issue sync: %s cited, %s due, %s asked (%s read, %s unchanged, %s refused) in %s "
        "requests; %s state changes; projects re-applied %s; paused %s",
        report.cited,
        report.due,
        report.asked,
        report.read,
        report.unchanged,
        report.failed,
        report.requests,
        report.state_changes,
        report.projects_refreshed,
        report.paused,
    )
    return report


def _due(now: datetime.datetime, report: SyncReport) -> list[_Due]:
    """This tick's share of the cited issues a token lets us read: never read first, then
    those read longest ago, once a sync period has passed since."""
    rows = cited_issues(today=now.date()).exclude(url="")
    grouped: dict[IssueAddress, list[tuple[int, str, datetime.datetime | None]]] = defaultdict(list)
    for pk, url, etag, synced_at in rows.values_list("pk", "url", "etag", "synced_at"):
        address = issue_address(url)
        if address is None:
            continue  # a tracker without an adapter (Buganizer, JIRA): stays unknown
        if not settings.PARITY_TRACKER_TOKENS.get(address.host):
            _tell_no_token(address.host, report)
            continue
        grouped[address].append((pk, etag, synced_at))
    report.cited = len(grouped)
    period = datetime.timedelta(seconds=settings.PARITY_TRACKER_SYNC_SECONDS)
    due = []
    for address, group in grouped.items():
        etags = {etag for _, etag, _ in group}
        times = [synced_at for _, _, synced_at in group]
        synced_at = None if None in times else min(times)
        if synced_at is None or synced_at <= now - period:
            etag = etags.pop() if len(etags) == 1 else ""
            due.append(_Due(address, [pk for pk, _, _ in group], etag, synced_at))
    report.due = len(due)
    due.sort(key=lambda d: (d.synced_at is not None, d.synced_at or now, d.address))
    tick, seconds = settings.PARITY_TRACKER_SYNC_TICK_SECONDS, settings.PARITY_TRACKER_SYNC_SECONDS
    share = math.ceil(report.cited * tick / max(seconds, tick))
    return due[:share]


def _tell_no_token(host: str, report: SyncReport) -> None:
    if host not in report.no_token:
        report.no_token.append(host)
    if host not in _told_no_token:
        _told_no_token.add(host)
        logger.warning(
            "issue sync: no token for %s in PARITY_TRACKER_TOKENS; its issues are not synced",
            host,
        )


def _read(due: list[_Due], now: datetime.datetime, report: SyncReport) -> set[int]:
    """Ask each host for its due issues; returns the projects where an issue opened or closed."""
    by_host: dict[tuple[str, str], list[_Due]] = defaultdict(list)
    for item in due:
        by_host[item.address.tracker, item.address.host].append(item)
    # Stop well before the next tick: what is left is due again then.
    deadline = time.monotonic() + settings.PARITY_TRACKER_SYNC_TICK_SECONDS * 0.8
    changed: set[int] = set()
    for (kind, host), items in sorted(by_host.items()):
        paused_until = _paused_until(host)
        if paused_until is not None:
            report.paused[host] = f"rate limited until {paused_until:%Y-%m-%d %H:%M:%S}Z"
            continue
        tracker = tracker_for(kind, host)
        ids = {item.address: item.issue_ids for item in items}
        answered: set[IssueAddress] = set()
        try:
            for fetched in _until(tracker.fetch([(i.address, i.etag) for i in items]), deadline):
                answered.add(fetched.address)
                changed |= _store(fetched, ids[fetched.address], now, report)
        except RateLimited as exc:
            _pause(host, exc.resume_at)
            report.paused[host] = str(exc)
            logger.warning("issue sync: %s", exc)
        except TrackerUnavailable as exc:
            left = [pk for address, pks in ids.items() if address not in answered for pk in pks]
            TrackingIssue.objects.filter(pk__in=left).update(sync_error=str(exc)[:500])
            report.paused[host] = str(exc)
            logger.warning("issue sync: %s; %s issues wait for the next tick", exc, len(left))
        report.asked += len(answered)
        report.requests += tracker.quota.requests
    return changed


def _until(fetched: Iterator[Fetched], deadline: float) -> Iterator[Fetched]:
    for item in fetched:
        yield item
        if time.monotonic() > deadline:
            return


def _store(
    fetched: Fetched, issue_ids: list[int], now: datetime.datetime, report: SyncReport
) -> set[int]:
    """Write one answer to every row of the issue; returns the projects whose rows changed
    between closed and not closed."""
    rows = TrackingIssue.objects.filter(pk__in=issue_ids)
    if fetched.error:
        report.failed += 1
        rows.update(synced_at=now, sync_error=fetched.error)
        return set()
    if fetched.unchanged:
        report.unchanged += 1
        rows.update(synced_at=now, sync_error="")
        return set()
    report.read += 1
    facts = fetched.facts
    closed = facts.state == IssueState.CLOSED
    before = list(rows.values_list("project_id", "state"))
    rows.update(
        state=facts.state,
        title=facts.title,
        labels=list(facts.labels),
        assignee=facts.assignee[:200],
        closed_at=facts.closed_at if closed else None,
        etag=fetched.etag[:200],
        synced_at=now,
        sync_error="",
    )
    moved = {project_id for project_id, state in before if (state == IssueState.CLOSED) != closed}
    report.state_changes += sum(state != facts.state for _, state in before)
    return moved


def _pause_key(host: str) -> str:
    return f"parity:issue-sync:paused:{host}"


def _pause(host: str, until: datetime.datetime) -> None:
    seconds = max(1, math.ceil((until - timezone.now()).total_seconds()))
    cache.set(_pause_key(host), until.isoformat(), timeout=seconds)


def _paused_until(host: str) -> datetime.datetime | None:
    """When the host said to ask again, if that is still to come."""
    stored = cache.get(_pause_key(host))
    until = datetime.datetime.fromisoformat(stored) if stored else None
    return until if until is not None and until > timezone.now() else None
