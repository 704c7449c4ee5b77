"""Webhooks: the events parity announces, and each delivery's attempts (docs/webhooks.md).

Events are recorded after the write that caused them has committed (a recompute, a probe run,
the expiry beat, the digest's plan), by the Celery adapters in ``parity.tasks``, which queue
one delivery task per endpoint on the webhooks queue. Nothing here runs inside the engine's
transaction, and an attempt is bounded as a whole (PARITY_WEBHOOK_TIMEOUT_SECONDS): a slow or
dead receiver delays its own deliveries only. With no active endpoint subscribing to an event,
nothing is computed or written for it.

What it reads is ``parity.selectors.webhooks``; what it sends leaves through
``parity.outbound`` (the egress policy, no redirects followed); what it writes is here.
"""

import datetime
import hashlib
import logging
import time
from collections.abc import Iterable
from urllib.parse import urljoin

from django.conf import settings
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from parity import outbound
from parity.models import (
    Backend,
    Project,
    Run,
    Transition,
    Triage,
    WebhookAttempt,
    WebhookDelivery,
    WebhookDeliveryStatus,
    WebhookEndpoint,
    WebhookEvent,
    WebhookFormat,
    WebhookNotice,
)
from parity.models.fields import UNREADABLE_HELP, Unreadable
from parity.pure import webhooks as signing
from parity.pure.suite_runs import move_of
from parity.result_reads.verdict import run_uncovered
from parity.selectors import webhooks as reads
from parity.selectors.suite_gaps import folded_q, suites_unrun, suites_unrun_counted

logger = logging.getLogger(__name__)

ITEMS_MAX = reads.ITEMS_MAX
# Answers worth another attempt: a timeout, too many requests, and any server error.
RETRY_STATUSES = {408, 429}
# A retry due sooner than this is queued with a countdown; a later one is left to the sweep,
# since Redis redelivers a message held longer than its visibility timeout.
COUNTDOWN_MAX_SECONDS = 5 * 60
# A receiver's answer is read only for its status; more than this of its body is not read.
ANSWER_READ_BYTES = 64 * 1024


def _absolute(path: str) -> str:
    return f"{settings.SITE_URL}{path}"


def _endpoints(project_id: int, event: str) -> list[WebhookEndpoint]:
    return reads.endpoints_subscribing(project_id=project_id, event=event)


webhooks_active = reads.webhooks_active


def endpoint_secrets_reencrypt() -> tuple[int, list[int]]:
    """Write every endpoint's secret and URL again, so they are encrypted with the newest key of
    PARITY_SECRETS_KEYS and an older key can be dropped; returns how many were written and the
    ids of those no key in use can read (left as they were)."""
    written, unreadable = 0, []
    with transaction.atomic():
        for endpoint in WebhookEndpoint.objects.select_for_update().order_by("pk"):
            if isinstance(endpoint.secret, Unreadable) or isinstance(endpoint.url, Unreadable):
                unreadable.append(endpoint.pk)
                continue
            endpoint.save(update_fields=["secret", "url"])  # both encrypted (0045)
            written += 1
    logger.info("webhook secrets re-encrypted: %s; unreadable: %s", written, unreadable)
    return written, unreadable


def notice_record(
    *,
    project: Project,
    event: str,
    payload: dict,
    summary: dict,
    key: str = "",
    subjects: Iterable = (),
) -> list[int]:
    """Record an event and a pending delivery per endpoint subscribing to it; returns the
    deliveries' ids (none when nobody subscribes, or ``key`` was announced already)."""
    endpoints = _endpoints(project.pk, event)
    if not endpoints:
        return []
    now = timezone.now()
    try:
        with transaction.atomic():
            notice = WebhookNotice.objects.create(
                project=project,
                event=event,
                key=key,
                payload=payload,
                summary=summary,
                subjects=list(subjects),
            )
    except IntegrityError:  # the key's event was announced already (a retried task)
        return []
    deliveries = WebhookDelivery.objects.bulk_create(
        WebhookDelivery(notice=notice, endpoint=e, next_attempt_at=now) for e in endpoints
    )
    logger.info("webhook %s %s: %s deliveries", event, notice.pk, len(deliveries))
    return [d.pk for d in deliveries]


# The events.


def _run_data(run: Run, backend: Backend) -> dict:
    url = reverse("project-run", kwargs={"slug": run.project.slug, "pk": run.pk})
    return {
        "id": run.pk,
        "backend": backend.name,
        "commit": run.commit,
        "branch": run.branch,
        "url": _absolute(url),
    }


def _gap_items(gaps) -> list[dict]:
    return [
        {
            "gap": g.pk,
            "test": g.test.key,
            "file": g.test.file,
            "state": g.state,
            "reason": g.reason.text if g.reason_id else "",
            "url": _absolute(
                reverse("project-test", kwargs={"slug": g.project.slug, "pk": g.test_id})
            ),
        }
        for g in reads.gaps_listed(gaps)
    ]


def notices_after_recompute(*, run_id: int, backend_ids: list[int]) -> list[int]:
    """After a recompute of ``run_id`` committed: per backend, one event listing the untracked
    gaps it opened and closed (gaps an earlier recompute of the run announced left out: a late
    shard's), a coverage drop of the run's backend, its version transition and the tests it
    moved into or out of flaky."""
    run = Run.objects.select_related("project", "backend").filter(pk=run_id).first()
    if run is None or not reads.webhooks_active(project_id=run.project_id):
        return []
    ids = []
    # Read once for every backend: a suite never run on one is one item of its event.
    unrun = suites_unrun(project=run.project) if _endpoints(run.project_id, UNTRACKED) else []
    for backend in Backend.objects.filter(pk__in=backend_ids).order_by("pk"):
        mine = [u for u in unrun if u.backend_id == backend.pk]
        ids += _untracked_gaps_notice(run=run, backend=backend, unrun=mine)
    ids += _coverage_drop_notice(run=run)
    ids += _transition_notice(run=run)
    ids += _flaky_tests_notice(run=run)
    return ids


UNTRACKED = WebhookEvent.UNTRACKED_GAPS


def _untracked_gaps_notice(*, run: Run, backend: Backend, unrun=()) -> list[int]:
    """``unrun``: the suites never run on ``backend`` (``suite_gaps.suites_unrun``): the
    missing gaps of their tests are one item each (``suites``), not in ``opened``; every
    gap's id is still a subject, so none is announced again."""
    event = WebhookEvent.UNTRACKED_GAPS
    if not _endpoints(run.project_id, event):
        return []
    # A gap a first shard opened and a late one closed is announced twice, once each way.
    announced = reads.subjects_announced(
        project=run.project, event=event, run__id=run.pk, backend=backend.name
    )
    opened, closed = reads.untracked_gaps_changed(
        run=run, backend_id=backend.pk, announced=announced
    )
    opened_ids = list(opened.values_list("pk", flat=True))
    folded = folded_q(list(unrun))
    suites = suites_unrun_counted(list(unrun), opened) if folded is not None else []
    every_opened, opened = opened_ids, opened if folded is None else opened.exclude(folded)
    if suites:
        opened_ids = list(opened.values_list("pk", flat=True))
    closed_ids = list(closed.values_list("pk", flat=True))
    # Gaps the run did not open but uncovered (the verdict's: an exemption's condition lapsed,
    # it expired or a maintainer removed it since the previous run), each with why.
    found = run_uncovered(run=run) if backend.pk == run.backend_id else []
    uncovered = reads.untracked_gaps_uncovered(
        backend_id=backend.pk, tests=[g.test_id for g in found], announced=announced
    )
    why = {g.test: g.why for g in found}
    uncovered_ids = list(uncovered.values_list("pk", flat=True))
    if not every_opened and not closed_ids and not uncovered_ids:
        return []
    run_data = _run_data(run, backend)
    payload = {
        "run": run_data,
        "backend": backend.name,
        "opened_total": len(opened_ids),
        "closed_total": len(closed_ids),
        "opened": _gap_items(opened),
        "closed": _gap_items(closed),
        "uncovered_total": len(uncovered_ids),
        "uncovered": [{**i, "why": why.get(i["test"], "")} for i in _gap_items(uncovered)],
        "suites": [
            {
                "suite": u.suite,
                "status": u.status,
                "opened": u.missing,
                "reason": u.reason,
                "issue_url": u.issue_url,
            }
            for u in suites
        ],
    }
    title = (
        f"{run.project.slug} {backend.name}: {len(opened_ids)} untracked "
        f"gap{'' if len(opened_ids) == 1 else 's'} opened, "
        f"{len(closed_ids)} closed by run {run.pk}"
        + (
            f", {len(uncovered_ids)} uncovered (an exemption lapsed, expired or was removed)"
            if uncovered_ids
            else ""
        )
    )
    if suites:
        title += "; " + "; ".join(
            f"suite {u.suite} {'is excluded on' if u.status == 'excluded' else 'never ran on'} "
            f"{backend.name}: {u.missing:,} tests missing"
            for u in suites
        )
    sections = [
        _section("Opened", payload["opened"], len(opened_ids)),
        _section("Closed", payload["closed"], len(closed_ids)),
        *(
            [_section("Uncovered", payload["uncovered"], len(uncovered_ids))]
            if uncovered_ids
            else []
        ),
    ]
    return notice_record(
        project=run.project,
        event=event,
        payload=payload,
        summary={"title": title, "url": run_data["url"], "sections": sections},
        subjects=[f"opened:{i}" for i in every_opened]
        + [f"closed:{i}" for i in closed_ids]
        + [f"uncovered:{i}" for i in uncovered_ids],
    )


def _section(heading: str, items: list[dict], total: int) -> dict:
    return {
        "heading": heading,
        "total": total,
        "items": [
            # An uncovered gap says why: "expired 2026-12-01", "removed by alice on ...".
            {
                "text": f"{i['test']} ({'; '.join(filter(None, [i['state'], i.get('why')]))})",
                "url": i["url"],
            }
            for i in items
        ],
    }


def _coverage_drop_notice(*, run: Run) -> list[int]:
    state = reads.coverage_drop_state(run=run)
    if state is None:
        return []
    run_data = _run_data(run, run.backend)
    payload = {
        "run": run_data,
        "backend": run.backend.name,
        "previous_run": state.previous_run_id,
        "previous_test_count": state.previous_test_count,
        "test_count": state.test_count,
    }
    title = (
        f"{run.project.slug} {run.backend.name}: coverage dropped from "
        f"{state.previous_test_count} to {state.test_count} tests in run {run.pk}"
    )
    return notice_record(
        project=run.project,
        event=WebhookEvent.COVERAGE_DROP,
        payload=payload,
        summary={"title": title, "url": run_data["url"], "sections": []},
        key=f"coverage_drop:run:{run.pk}",
    )


def _transition_notice(*, run: Run) -> list[int]:
    """The version transition ``run`` made (its attributes changed), announced once."""
    transition = Transition.objects.filter(to_run=run).first()
    if transition is None:
        return []
    path = reverse("project-transition", kwargs={"slug": run.project.slug, "pk": transition.pk})
    changed = ", ".join(f"{k} {a} → {b}" for k, a, b in transition.changes)
    payload = {
        "transition": transition.pk,
        "backend": run.backend.name,
        "run": _run_data(run, run.backend),
        "from_run": transition.from_run_id,
        "changed": transition.changed,
        "counts": transition.counts,
        "lapses": transition.lapses,
        "url": _absolute(path),
    }
    c = transition.counts
    title = (
        f"{run.project.slug} {run.backend.name}: {changed}; Fail→Pass {c['fail_to_pass']:,}, "
        f"Pass→Fail {c['pass_to_fail']:,}, new {c['new']:,}, gone {c['gone']:,}"
    )
    return notice_record(
        project=run.project,
        event=WebhookEvent.TRANSITION,
        payload=payload,
        summary={"title": title, "url": payload["url"], "sections": []},
        key=f"transition:{transition.pk}",
    )


def _flaky_tests_notice(*, run: Run) -> list[int]:
    """The tests ``run`` moved into or out of flaky on its backend (states from history),
    announced once per run: a flaky test is news when it enters and when it leaves, not at
    each failure (its gap is held open meanwhile, reading flaky)."""
    event = WebhookEvent.FLAKY_TESTS
    if not _endpoints(run.project_id, event):
        return []
    changes = reads.flaky_changes_of_run(run=run)
    if not changes:
        return []

    def items(entered: bool) -> list[dict]:
        return [
            {
                "test": c.test.key,
                "file": c.test.file,
                "rank": round(c.rank, 4),
                "url": _absolute(
                    reverse("project-test", kwargs={"slug": run.project.slug, "pk": c.test_id})
                ),
            }
            for c in changes
            if c.entered == entered
        ]

    entered, left = items(True), items(False)
    run_data = _run_data(run, run.backend)
    payload = {
        "run": run_data,
        "backend": run.backend.name,
        "entered_total": len(entered),
        "left_total": len(left),
        "entered": entered[:ITEMS_MAX],
        "left": left[:ITEMS_MAX],
    }
    title = (
        f"{run.project.slug} {run.backend.name}: {len(entered)} "
        f"test{'' if len(entered) == 1 else 's'} entered flaky, {len(left)} left by run {run.pk}"
    )
    sections = [
        {
            "heading": heading,
            "total": len(rows),
            "items": [
                {"text": f"{i['test']} (fails at least {i['rank'] * 100:.0f}%)", "url": i["url"]}
                for i in rows[:ITEMS_MAX]
            ],
        }
        for heading, rows in (("Entered flaky", entered), ("Left flaky", left))
        if rows
    ]
    return notice_record(
        project=run.project,
        event=event,
        payload=payload,
        summary={"title": title, "url": run_data["url"], "sections": sections},
        key=f"flaky_tests:run:{run.pk}",
    )


def target_at_risk_notices(*, project: Project, entered: list) -> list[int]:
    """One event per target that entered risk (``parity.services.targets.targets_assess``:
    not met, and no progress or a forecast after its date), once per entry."""
    ids = []
    path = reverse("project-trend", kwargs={"slug": project.slug})
    for progress in entered:
        target, result = progress.target, progress.forecast
        url = _absolute(f"{path}?backend={progress.backend}")
        payload = {
            "target": target.pk,
            "backend": progress.backend,
            "score": target.score,
            "due": target.due.isoformat(),
            "denominator": target.denominator,
            "published": progress.published,
            "steering": result.steering,
            "remaining": result.remaining,
            "rate_per_day": result.rate,
            "forecast": result.on.isoformat() if result.on else None,
            "no_progress": result.no_progress,
            "url": url,
        }
        when = "no progress" if result.no_progress else f"forecast {result.on.isoformat()}"
        title = (
            f"{project.slug} {progress.backend}: target {target.score:.0%} by "
            f"{target.due.isoformat()} at risk ({when}; {result.remaining:,} tests to go)"
        )
        ids += notice_record(
            project=project,
            event=WebhookEvent.TARGET_AT_RISK,
            payload=payload,
            summary={"title": title, "url": url, "sections": []},
            key=f"target_at_risk:{target.pk}:{target.at_risk_since.isoformat()}",
        )
    return ids


def suite_tier_notices(*, moves: list) -> list[int]:
    """One event per tier move of a suite on a backend (``SuiteTierMove``: promoted, demoted,
    recovered), once per move; the streak rules keep a suite from flapping at a threshold."""
    ids = []
    for move in moves:
        project = move.project
        url = _absolute(reverse("project-suites", kwargs={"slug": project.slug}))
        what = move_of(move.before, move.after)
        backend = move.backend.name
        payload = {
            "suite": move.suite,
            "backend": backend,
            "before": move.before,
            "after": move.after,
            "move": what,
            "run": move.run_id,
            "at": move.at.isoformat(),
            "url": url,
        }
        tiers = f"{move.before} → {move.after}"
        title = f"{project.slug} {backend}: suite {move.suite} {what} ({tiers})"
        ids += notice_record(
            project=project,
            event=WebhookEvent.SUITE_TIER_CHANGED,
            payload=payload,
            summary={"title": title, "url": url, "sections": []},
            key=f"suite_tier:{move.pk}",
        )
    return ids


def _exemption_item(triage: Triage) -> dict:
    return {
        "exemption": triage.pk,
        "match": triage.match,
        "kind": triage.kind,
        "expires_on": triage.expires_on.isoformat() if triage.expires_on else None,
        "note": triage.note,
    }


def _exemptions_url(project: Project, query: str = "") -> str:
    return _absolute(reverse("project-exemptions", kwargs={"slug": project.slug}) + query)


def notices_after_probe(*, run_id: int) -> list[int]:
    """After probe run ``run_id`` was recorded: the exemptions whose every test passed in it,
    each announced once per backend."""
    event = WebhookEvent.EXEMPTION_PASSES_NOW
    run = Run.objects.select_related("project", "backend").filter(pk=run_id).first()
    if run is None or not _endpoints(run.project_id, event):
        return []
    passing = reads.exemptions_passing(run=run)
    announced = reads.subjects_announced(project=run.project, event=event, backend=run.backend.name)
    new = sorted((t for t in passing if t.pk not in announced), key=lambda t: t.pk)
    if not new:
        return []
    items = [_exemption_item(t) for t in new[:ITEMS_MAX]]
    url = _exemptions_url(run.project, f"?probe=passes&backend={run.backend.name}")
    payload = {
        "run": _run_data(run, run.backend),
        "backend": run.backend.name,
        "total": len(new),
        "exemptions": items,
    }
    title = f"{run.project.slug} {run.backend.name}: {len(new)} exemptions pass now"
    section = {
        "heading": "Pass in the probe run",
        "total": len(new),
        "items": [{"text": i["match"]} for i in items],
    }
    return notice_record(
        project=run.project,
        event=event,
        payload=payload,
        summary={"title": title, "url": url, "sections": [section]},
        subjects=[t.pk for t in new],
    )


def notices_expiring(*, today: datetime.date | None = None) -> list[int]:
    """Per project, the triages expiring within ``PARITY_WEBHOOK_EXPIRING_DAYS`` not announced
    yet for that expiry day (a triage extended is announced again before its new day)."""
    event = WebhookEvent.EXEMPTION_EXPIRING
    today = today or timezone.now().date()
    until = today + datetime.timedelta(days=settings.PARITY_WEBHOOK_EXPIRING_DAYS)
    ids = []
    for project in reads.projects_with_webhooks():
        if not _endpoints(project.pk, event):
            continue
        announced = reads.subjects_announced(project=project, event=event)
        triages = reads.exemptions_expiring(project=project, today=today, until=until)
        new = [t for t in triages if f"{t.pk}:{t.expires_on}" not in announced]
        if not new:
            continue
        items = [_exemption_item(t) for t in new[:ITEMS_MAX]]
        title = f"{project.slug}: {len(new)} exemptions expire by {until.isoformat()}"
        section = {
            "heading": "Expiring",
            "total": len(new),
            "items": [{"text": f"{i['match']} (expires {i['expires_on']})"} for i in items],
        }
        ids += notice_record(
            project=project,
            event=event,
            payload={"until": until.isoformat(), "total": len(new), "exemptions": items},
            summary={"title": title, "url": _exemptions_url(project), "sections": [section]},
            subjects=[f"{t.pk}:{t.expires_on}" for t in new],
        )
    return ids


def notice_digest_ready(*, project: Project, week: str, preview_url: str) -> list[int]:
    """The project's digest of ISO ``week`` is planned: once per project and week."""
    title = f"{project.slug}: the weekly digest of {week} is ready"
    return notice_record(
        project=project,
        event=WebhookEvent.DIGEST_READY,
        payload={"week": week, "url": preview_url},
        summary={"title": title, "url": preview_url, "sections": []},
        key=f"digest_ready:{week}",
    )


# Delivery.


def body_render(delivery: WebhookDelivery) -> bytes:
    """The exact bytes of a delivery: the same on every attempt, so its digest is too."""
    notice = delivery.notice
    if delivery.endpoint.format == WebhookFormat.SLACK:
        return signing.body_encode(signing.slack_message(notice.summary))
    return signing.body_encode(
        {
            "id": notice.pk,
            "event": notice.event,
            "created_at": notice.created_at.isoformat(),
            "project": notice.project.slug,
            "title": notice.summary.get("title", ""),
            "url": notice.summary.get("url", ""),
            "data": notice.payload,
        }
    )


def retry_delay(attempt: int) -> float:
    """Seconds before attempt ``attempt + 1``: exponential, from PARITY_WEBHOOK_RETRY_SECONDS."""
    return settings.PARITY_WEBHOOK_RETRY_SECONDS * 4 ** (attempt - 1)


def _post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int | None, str, bool]:
    """Send one attempt through the outbound room: (status, error, worth retrying). The whole
    attempt (resolving, connecting, sending, reading) ends by PARITY_WEBHOOK_TIMEOUT_SECONDS;
    a redirect is not followed (it would carry the signature elsewhere) and fails the delivery,
    as a URL the egress policy refuses does (no retry changes either: the URL or the setting
    must)."""
    try:
        answer = outbound.request(
            "POST",
            url,
            body=body,
            headers=headers,
            timeout=settings.PARITY_WEBHOOK_TIMEOUT_SECONDS,
            max_bytes=ANSWER_READ_BYTES,
            purpose="webhook",
        )
    except outbound.Refused as exc:
        return None, f"not sent: {exc}", False
    except outbound.TooLarge as exc:  # only the status matters; the body is not read on
        answer = outbound.Response(status=exc.status, headers={}, body=b"", url=url)
    except outbound.TimedOut:
        seconds = settings.PARITY_WEBHOOK_TIMEOUT_SECONDS
        return None, f"TimedOut: no whole answer within {seconds} s", True
    except outbound.OutboundError as exc:
        return None, f"{type(exc).__name__}: {exc}", True
    return _answer_read(answer)


def _answer_read(answer: outbound.Response) -> tuple[int | None, str, bool]:
    if 300 <= answer.status < 400:
        where = outbound.url_shown(urljoin(answer.url, answer.header("location")))
        return answer.status, f"HTTP {answer.status}: a redirect (to {where}), not followed", False
    error = "" if 200 <= answer.status < 300 else f"HTTP {answer.status} {answer.reason}".strip()
    return answer.status, error, _retryable(answer.status)


def delivery_attempt(*, delivery_id: int, now: datetime.datetime | None = None) -> float | None:
    """Make the delivery's next attempt if it is due, and log it; returns the seconds until
    the attempt after (None: delivered, failed for good, not due, or taken by another task).

    The row stays locked through the attempt, so a duplicate task (a redelivery, the retry
    sweep) skips it rather than sending twice."""
    with transaction.atomic():
        delivery = (
            WebhookDelivery.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("notice__project", "endpoint")
            .filter(pk=delivery_id, status=WebhookDeliveryStatus.PENDING)
            .first()
        )
        now = now or timezone.now()
        if delivery is None or delivery.next_attempt_at > now:
            return None
        return _attempt(delivery, now)


def _attempt(delivery: WebhookDelivery, now: datetime.datetime) -> float | None:
    body = body_render(delivery)
    endpoint = delivery.endpoint
    if isinstance(endpoint.secret, Unreadable) or isinstance(endpoint.url, Unreadable):
        # Sent unsigned or signed otherwise, it would be refused; no retry mends it, the keys
        # do. So it fails now, saying which endpoint and what to do (its host only: a Slack
        # URL's path is its secret; the URL is encrypted with the same keys, so usually
        # unreadable too).
        shown = "URL unreadable too" if isinstance(endpoint.url, Unreadable) else None
        error = (
            f"not sent: the secret of webhook endpoint {endpoint.pk} "
            f"({shown or outbound.url_shown(endpoint.url)}) "
            f"{UNREADABLE_HELP}"
        )
        logger.error("webhook delivery %s %s", delivery.pk, error)
        return _attempt_record(delivery, now, body=body, answer=(None, error), retryable=False)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "parity-webhooks",
        signing.EVENT_HEADER: delivery.notice.event,
        signing.DELIVERY_HEADER: str(delivery.pk),
        **signing.headers_signed(secret=endpoint.secret, timestamp=int(time.time()), body=body),
    }
    started = time.monotonic()
    status, error, retryable = _post(endpoint.url, body, headers)
    return _attempt_record(
        delivery,
        now,
        body=body,
        answer=(status, error),
        retryable=retryable,
        seconds=time.monotonic() - started,
    )


def _attempt_record(
    delivery: WebhookDelivery,
    now: datetime.datetime,
    *,
    body: bytes,
    answer: tuple[int | None, str],
    retryable: bool,
    seconds: float = 0.0,
) -> float | None:
    """Log the attempt and move the delivery on; returns the seconds until the next one."""
    status, error = answer
    delivery.attempts += 1
    attempt = WebhookAttempt(
        delivery=delivery,
        number=delivery.attempts,
        at=now,
        body_sha256=hashlib.sha256(body).hexdigest(),
        status_code=status,
        error=error,
        seconds=seconds,
    )
    delay = None
    if status is not None and 200 <= status < 300:
        delivery.status = WebhookDeliveryStatus.DELIVERED
        delivery.delivered_at = attempt.delivered_at = timezone.now()
    elif retryable and delivery.attempts < settings.PARITY_WEBHOOK_MAX_ATTEMPTS:
        delay = retry_delay(delivery.attempts)
        delivery.next_attempt_at = attempt.next_retry_at = now + datetime.timedelta(seconds=delay)
    else:
        delivery.status = WebhookDeliveryStatus.FAILED
    attempt.save()
    delivery.save(update_fields=["attempts", "status", "delivered_at", "next_attempt_at"])
    logger.info(
        "webhook delivery %s attempt %s to endpoint %s: %s %s",
        delivery.pk,
        delivery.attempts,
        delivery.endpoint_id,
        status,
        error,
    )
    return delay


def _retryable(status: int | None) -> bool:
    # No answer (refused, timed out, DNS) and server errors may pass; a 4xx other than 408 and
    # 429, or a redirect, says the request itself is refused, and will be again.
    return status is None or status >= 500 or status in RETRY_STATUSES


def deliveries_due(*, now: datetime.datetime | None = None) -> list[int]:
    return reads.deliveries_due(now=now or timezone.now())
