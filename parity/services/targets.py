"""Targets: a maintainer sets, changes and removes a backend's target (the API checks the
maintainer, as for triage), and each recompute's announcement assesses them (docs/targets.md).

A target's denominator is fixed when it is set: the whole of its backend's score in its latest
snapshot. A change of score or date keeps it; a new denominator is a new target."""

import datetime
import logging
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from parity.models import Backend, Project, Target
from parity.selectors.targets import TargetProgress, target_whole, targets_progress, targets_set

logger = logging.getLogger(__name__)

__all__ = ["targets_set"]  # for the task adapters, which ask through here


class TargetRejected(ValueError):
    """The request names a backend the project lacks, or breaks a rule; ``field`` names the
    field at fault."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class TargetRequest:
    backend: str
    score: float  # 0 < score <= 1
    due: datetime.date
    note: str = ""
    rate_weeks: int = 4
    margin_days: int = 7


def _check(request: TargetRequest, *, due_changed: bool = True) -> None:
    """The rules of a target. Its date is checked when it is set or changed: a date in the past
    is no target (it could only read as missed), but a target whose date has passed keeps it
    when its note or score changes."""
    if due_changed and request.due < timezone.now().date():
        raise TargetRejected(
            f"A target's date is today or later (UTC): {request.due} has passed.", field="due"
        )
    if not 0 < request.score <= 1:
        raise TargetRejected("A target's score is a share: above 0, at most 1.", field="score")
    if not 1 <= request.rate_weeks <= 52:
        raise TargetRejected("The rate is measured over 1 to 52 weeks.", field="rate_weeks")
    if not 0 <= request.margin_days <= 365:
        raise TargetRejected("The margin is 0 to 365 days.", field="margin_days")


def target_create(*, project: Project, request: TargetRequest, user=None) -> Target:
    """Set a target on ``request.backend``, its denominator the whole of that backend's score
    now. Raises ``TargetRejected``."""
    _check(request)
    backend = project.backend_named(request.backend)
    if backend is None:
        raise TargetRejected(f"No backend '{request.backend}' in {project.slug}.", field="backend")
    if backend.pk == project.reference_backend_id:
        raise TargetRejected("The reference's score is its own: no target.", field="backend")
    if Backend.objects.filter(family=backend).exists():
        # A family has no score of its own (its variants' range), so no series to forecast
        # from: docs/targets.md, "Not yet".
        raise TargetRejected(
            f"{backend.name} is a family: set a target on each of its variants.", field="backend"
        )
    whole = target_whole(project=project, backend=backend)
    if not whole:
        raise TargetRejected(
            f"{backend.name} has no score yet: a target needs its first compared run.",
            field="backend",
        )
    target = Target.objects.create(
        project=project,
        backend=backend,
        score=request.score,
        due=request.due,
        denominator=whole,
        note=request.note,
        rate_weeks=request.rate_weeks,
        margin_days=request.margin_days,
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )
    logger.info("target %s set: %s of %s", target.pk, target, whole)
    return target


def target_update(
    *,
    target: Target,
    score: float | None = None,
    due: datetime.date | None = None,
    note: str | None = None,
) -> Target:
    """Change a target's score, date or note; its denominator stays (docs/targets.md)."""
    changed = {"score": score, "due": due, "note": note}
    due_changed = due is not None and due != target.due
    for name, value in changed.items():
        if value is not None:
            setattr(target, name, value)
    _check(
        TargetRequest(
            backend=target.backend.name,
            score=target.score,
            due=target.due,
            rate_weeks=target.rate_weeks,
            margin_days=target.margin_days,
        ),
        due_changed=due_changed,
    )
    target.save(update_fields=[k for k, v in changed.items() if v is not None] or None)
    return target


def target_delete(*, target: Target) -> None:
    logger.info("target %s removed: %s", target.pk, target)
    target.delete()


def targets_assess(*, project: Project) -> list[TargetProgress]:
    """Move each of the project's targets in or out of risk by its progress now (with the
    hysteresis of ``parity.pure.forecasts.at_risk_next``); returns those that entered risk,
    each once until it leaves. One query without targets."""
    entered = []
    with transaction.atomic():
        for progress in targets_progress(project=project):
            if not progress.changed:
                continue
            target = progress.target
            target.at_risk = progress.at_risk
            target.at_risk_since = timezone.now() if progress.at_risk else None
            # Conditional: of two assessments at once, one moves it (and announces it).
            moved = Target.objects.filter(pk=target.pk, at_risk=not progress.at_risk).update(
                at_risk=target.at_risk, at_risk_since=target.at_risk_since
            )
            if moved and progress.at_risk:
                entered.append(progress)
    return entered
