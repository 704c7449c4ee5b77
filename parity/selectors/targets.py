"""A project's targets with their progress and forecast (docs/targets.md), from the daily
snapshots the trend page draws (``snapshot_days``): the published figure (the headline score of
the last point), the steering figure (its passing tests over the denominator fixed when the
target was set) and the forecast of ``parity.pure.forecasts``. Three queries, however many
targets: the targets, the backends left out, their backends' daily points."""

import datetime
from dataclasses import dataclass

from django.utils import timezone

from parity.models import Backend, Project, Snapshot, Target
from parity.pure.forecasts import DayCount, Forecast, at_risk_next, forecast
from parity.pure.scores import Counts, Definition, parts, share
from parity.selectors.fragments import snapshot_counts
from parity.selectors.snapshot_days import snapshot_days

_FIELDS = (
    "score", "passing", "reference_passing", "intended", "not_applicable", "rerun",
    "reference_tests", "differ_not_passed", "not_applicable_not_passed",
)  # fmt: skip


@dataclass(frozen=True)
class TargetProgress:
    target: Target
    backend: str
    published: float | None  # the headline score of the last point (today's whole)
    forecast: Forecast  # its ``steering`` is the figure over the fixed denominator
    at_risk: bool  # the state this progress moves the target to (hysteresis applied)

    @property
    def changed(self) -> bool:
        """This progress moves the target in or out of risk."""
        return self.at_risk != self.target.at_risk


def _parts_of(values: dict, definition: Definition) -> tuple[int, int] | None:
    """A snapshot's (passing, whole) by the definition; None where it has no score."""
    if values["score"] is None:
        return None
    counts = snapshot_counts(Snapshot(**{k: values[k] for k in _FIELDS}))
    counts["compared"] = counts.pop("reference_passing")
    del counts["rerun"]  # outside the score
    return parts(Counts(**counts), definition)


def targets_set(*, project_id: int) -> bool:
    """Whether the project has a target (what a recompute asks before queuing their
    assessment). One query."""
    return Target.objects.filter(project_id=project_id).exists()


def target_whole(*, project: Project, backend: Backend) -> int | None:
    """The whole of ``backend``'s score in its latest snapshot (a new target's denominator);
    None without a scored snapshot. One query."""
    snapshot = (
        Snapshot.objects.filter(backend=backend, score__isnull=False)
        .order_by("-at", "-pk")
        .values(*_FIELDS)
        .first()
    )
    if snapshot is None:
        return None
    return _parts_of(snapshot, project.score_settings())[1]


def targets_progress(
    *,
    project: Project,
    backends: list[str] | None = None,
    today: datetime.date | None = None,
) -> list[TargetProgress]:
    """Each target of ``project`` (of ``backends``' names only, when given) with its progress
    and forecast on ``today`` (UTC's, by default), by backend and date. Three queries."""
    targets = Target.objects.filter(project=project).select_related("backend")
    if backends is not None:
        targets = targets.filter(backend__name__in=backends)
    targets = list(targets)
    if not targets:
        return []
    today = today or timezone.now().date()
    weeks = max(t.rate_weeks for t in targets)
    since = datetime.datetime.combine(
        today - datetime.timedelta(weeks=weeks), datetime.time(), tzinfo=datetime.UTC
    )
    chosen = {t.backend_id for t in targets}
    others = tuple(
        Backend.objects.filter(project=project).exclude(pk__in=chosen).values_list("pk", flat=True)
    )
    definition = project.score_settings()
    days: dict[str, list[tuple[datetime.date, int, int]]] = {}
    for day in snapshot_days(
        project_ids=[project.pk], since=since, fields=_FIELDS, excluded_backends=others
    ):
        counted = _parts_of(day.values, definition)
        if counted is not None:
            days.setdefault(day.backend, []).append((day.at.date(), *counted))
    return [_progress(t, days.get(t.backend.name, []), today) for t in targets]


def _progress(target: Target, days: list, today: datetime.date) -> TargetProgress:
    result = forecast(
        points=[DayCount(day, passing) for day, passing, _ in days],
        score=target.score,
        denominator=target.denominator,
        today=today,
        weeks=target.rate_weeks,
    )
    published = share(days[-1][1], days[-1][2]) if days else None
    return TargetProgress(
        target=target,
        backend=target.backend.name,
        published=published,
        forecast=result,
        at_risk=at_risk_next(
            was=target.at_risk, result=result, due=target.due, margin=target.margin
        ),
    )
