"""The dated score trend of the trend page: per backend (a family's variants each), the headline
score (by the project's definition) of each day's last snapshot in a window, and the events
that explain a move: a coverage drop (any snapshot of the window that had one) and a change of
the run's attributes (``rocm 7.13 -> 7.14``) from one point to the next. Read from the
snapshot roll-up (``Snapshot``), never from raw results: four queries, bounded by days x
backends (``snapshot_days``)."""

import datetime
from dataclasses import dataclass, field

from parity.models import Backend, Project, Run, Snapshot
from parity.selectors.fragments import headline_score
from parity.selectors.snapshot_days import snapshot_days

_SCORE_FIELDS = (
    "score", "passing", "reference_passing", "intended", "not_applicable",
    "reference_tests", "differ_not_passed", "not_applicable_not_passed",
)  # fmt: skip
COVERAGE_DROP, ATTRIBUTES = "coverage drop", "attributes"


@dataclass(frozen=True)
class TrendPoint:
    at: datetime.datetime
    score: float | None  # the headline; None: nothing to compare with then
    passing: int
    compared: int  # the tests the score was of (the reference's passing ones, by default)
    tests: int  # the run's tests
    run: int


@dataclass(frozen=True)
class TrendMark:
    at: datetime.datetime
    kind: str  # COVERAGE_DROP or ATTRIBUTES
    text: str  # what a reader hovering it reads
    run: int


@dataclass
class TrendSeries:
    backend: str
    points: list[TrendPoint] = field(default_factory=list)
    marks: list[TrendMark] = field(default_factory=list)


def trend_backends(*, project: Project, name: str | None) -> list[Backend]:
    """The backends a trend draws: ``name``'s, or each of its variants' for a family (it has no
    run of its own); without a name, every backend but the reference (whose score is 1).
    ``[]`` for a name the project lacks. One query, two with a name."""
    backends = Backend.objects.filter(project=project).order_by("name")
    if name:
        chosen = project.backend_named(name)
        if chosen is None:
            return []
        variants = list(backends.filter(family=chosen))
        return variants or [chosen]
    return [b for b in backends if b.pk != project.reference_backend_id]


def score_history(
    *, project: Project, backends: list[Backend], since: datetime.datetime
) -> list[TrendSeries]:
    """Each of ``backends``' dated scores since ``since`` and its marks, oldest first (a backend
    with no snapshot in the window has an empty series). Four queries."""
    chosen = {b.pk for b in backends}
    others = tuple(
        Backend.objects.filter(project=project).exclude(pk__in=chosen).values_list("pk", flat=True)
    )
    fields = (*_SCORE_FIELDS, "run_id", "test_count")
    days = snapshot_days(
        project_ids=[project.pk], since=since, fields=fields, excluded_backends=others
    )
    attributes = dict(
        Run.objects.filter(pk__in={d.values["run_id"] for d in days}).values_list(
            "pk", "attributes"
        )
    )
    definition = project.score_settings()
    series = {b.name: TrendSeries(backend=b.name) for b in backends}
    for day in days:
        values = day.values
        score = headline_score(Snapshot(**{k: values[k] for k in _SCORE_FIELDS}), definition)
        line = series[day.backend]
        point = TrendPoint(
            at=day.at,
            score=None if score is None else round(score, 4),
            passing=values["passing"],
            compared=values["reference_passing"],
            tests=values["test_count"],
            run=values["run_id"],
        )
        if line.points:
            _attributes_mark(line, line.points[-1], point, attributes)
        line.points.append(point)
    _coverage_marks(series, chosen, since)
    for line in series.values():
        line.marks.sort(key=lambda m: (m.at, m.kind))
    return list(series.values())


def _attributes_mark(line: TrendSeries, before: TrendPoint, after: TrendPoint, runs) -> None:
    old, new = runs.get(before.run) or {}, runs.get(after.run) or {}
    changed = [
        f"{key} {old.get(key, '–')} → {new.get(key, '–')}"
        for key in sorted(set(old) | set(new))
        if old.get(key) != new.get(key)
    ]
    if changed:
        line.marks.append(TrendMark(after.at, ATTRIBUTES, "; ".join(changed), after.run))


def _coverage_marks(series: dict, chosen: set[int], since: datetime.datetime) -> None:
    drops = Snapshot.objects.filter(
        backend_id__in=chosen, at__gte=since, coverage_drop=True
    ).values_list("backend__name", "at", "test_count", "run_id")
    for backend, at, tests, run in drops.order_by("at"):
        text = f"coverage dropped to {tests:,} tests"
        series[backend].marks.append(TrendMark(at, COVERAGE_DROP, text, run))
