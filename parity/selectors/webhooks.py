"""What the webhooks service reads: the endpoints an event goes to, what earlier events
announced, the gaps and exemptions a new event lists, and the deliveries due. The service
(``parity.services.webhooks``) writes events and attempts; ``parity.outbound`` sends them."""

import datetime

from django.db.models import QuerySet

from parity.definitions import triages_in_force, untracked_q
from parity.models import (
    BackendState,
    FlakyChange,
    Gap,
    GapState,
    ProbeOutcome,
    Project,
    Run,
    Triage,
    WebhookDelivery,
    WebhookDeliveryStatus,
    WebhookEndpoint,
    WebhookNotice,
)

# Items a JSON body lists per kind; the totals count them all.
ITEMS_MAX = 100


def endpoints_subscribing(*, project_id: int, event: str) -> list[WebhookEndpoint]:
    endpoints = WebhookEndpoint.objects.filter(project_id=project_id, active=True)
    return [e for e in endpoints if e.subscribes(event)]


def webhooks_active(*, project_id: int) -> bool:
    return WebhookEndpoint.objects.filter(project_id=project_id, active=True).exists()


def projects_with_webhooks() -> QuerySet[Project]:
    """Projects with an active endpoint, by id."""
    ids = WebhookEndpoint.objects.filter(active=True).values_list("project_id", flat=True)
    return Project.objects.filter(pk__in=ids.distinct()).order_by("pk")


def subjects_announced(*, project: Project, event: str, **payload) -> set:
    """The subjects (gap or exemption ids, as each event names them) earlier events of
    ``event`` announced; ``payload`` narrows to those whose payload matches
    (``run__id=…``, ``backend=…``)."""
    notices = WebhookNotice.objects.filter(project=project, event=event)
    if payload:
        notices = notices.filter(**{f"payload__{k}": v for k, v in payload.items()})
    return {s for subjects in notices.values_list("subjects", flat=True) for s in subjects}


def untracked_gaps_changed(*, run: Run, backend_id: int, announced: set) -> tuple[QuerySet, ...]:
    """The untracked gaps ``run`` opened and closed on the backend, less those announced
    (``opened:<id>``, ``closed:<id>``). Untracked as everywhere: a test only the backend runs
    (``reference_missing``) is no gap to triage (the queue's, the digest's)."""
    gaps = _untracked(backend_id)
    opened = gaps.filter(opened_run=run).exclude(pk__in=_ids(announced, "opened"))
    closed = gaps.filter(closed_run=run).exclude(pk__in=_ids(announced, "closed"))
    return opened, closed


def untracked_gaps_uncovered(*, backend_id: int, tests: list[int], announced: set) -> QuerySet:
    """The open untracked gaps of ``tests`` on the backend (those a run uncovered: an
    exemption's condition lapsed), less those announced (``uncovered:<id>``)."""
    gaps = _untracked(backend_id).filter(is_open=True)
    return gaps.filter(test_id__in=tests).exclude(pk__in=_ids(announced, "uncovered"))


def _untracked(backend_id: int) -> QuerySet:
    gaps = Gap.objects.filter(untracked_q(), backend_id=backend_id)
    return gaps.exclude(state=GapState.REFERENCE_MISSING)


def _ids(subjects: set, way: str) -> list[int]:
    return [int(s.split(":")[1]) for s in subjects if str(s).startswith(f"{way}:")]


def flaky_changes_of_run(*, run: Run) -> list[FlakyChange]:
    """The tests ``run`` moved into or out of flaky on its backend (states from history),
    most surely flaky first (their windows' rank then), with their tests."""
    return list(
        FlakyChange.objects.filter(run=run, backend_id=run.backend_id)
        .select_related("test")
        .order_by("-rank", "test__key")
    )


def gaps_listed(gaps: QuerySet) -> list[Gap]:
    """The first ``ITEMS_MAX`` of ``gaps``, with what an item shows."""
    return list(gaps.select_related("test", "reason", "project").order_by("pk")[:ITEMS_MAX])


def coverage_drop_state(*, run: Run) -> BackendState | None:
    """The backend's state when ``run`` is its current run and dropped coverage."""
    state = BackendState.objects.filter(backend_id=run.backend_id, current_run=run).first()
    return state if state is not None and state.coverage_drop else None


def exemptions_passing(*, run: Run) -> list[Triage]:
    """The exemptions whose every test passed in probe run ``run``."""
    outcomes = ProbeOutcome.objects.filter(run=run).select_related("triage")
    return [o.triage for o in outcomes if o.passes_now]


def exemptions_expiring(
    *, project: Project, today: datetime.date, until: datetime.date
) -> QuerySet[Triage]:
    return Triage.objects.filter(
        triages_in_force(today), project=project, expires_on__range=(today, until)
    ).order_by("expires_on", "pk")


def deliveries_due(*, now: datetime.datetime) -> list[int]:
    """Pending deliveries whose attempt is due: the sweep's, for retries beyond the task's
    own countdown and messages the broker lost."""
    due = WebhookDelivery.objects.filter(
        status=WebhookDeliveryStatus.PENDING, next_attempt_at__lte=now
    )
    return list(due.order_by("next_attempt_at").values_list("pk", flat=True)[:500])
