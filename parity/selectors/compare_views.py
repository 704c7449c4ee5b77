"""A project's compare views and their kept judgements (``CompareRow``, written by
``parity.services.compare_rows``): the list page and the API name the views; a view's page, CSV
and API read its rows a page at a time by their position; the test page reads a test's row in
each view; the overview reads a project's headline view. No read of results here: the counts
were summed when the view was computed (docs/compare-views.md)."""

import datetime
from dataclasses import dataclass

from django.db.models import QuerySet

from parity.models import Backend, CompareRow, CompareView, Project, TestCase
from parity.pure.compare import (
    RED,
    CompareRules,
    CompareState,
    Counts,
    JudgedRow,
    Judgement,
    rules_of_settings,
    sentence,
)


def compare_views_of(*, project: Project) -> QuerySet[CompareView]:
    return (
        CompareView.objects.filter(project=project)
        .select_related("project", "sample", "basis")
        .order_by("name")
    )


def compare_view_of(*, project: Project, name: str) -> CompareView | None:
    return compare_views_of(project=project).filter(name=name).first()


def compare_backends(*, project: Project) -> QuerySet[Backend]:
    """The variants a compare view may name: every backend of the project."""
    return Backend.objects.filter(project=project).order_by("name")


def kept_counts(view: CompareView) -> dict[CompareState, int]:
    """Tests per state when the view was last computed (zeros before)."""
    return {s: int(view.state_counts.get(s.value, 0)) for s in CompareState}


@dataclass(frozen=True)
class KeptReport:
    view: CompareView
    rules: CompareRules
    computed_at: datetime.datetime | None  # None: never computed yet
    since: datetime.datetime | None
    sample_runs: int
    basis_runs: int
    counts: dict[CompareState, int]  # of every row, whatever the filter
    total: int  # rows of the filter
    offset: int
    rows: list[JudgedRow]  # rows offset.. of the filter, worst state first


_ROW_FIELDS = (
    "test_id",
    "test__key",
    "state",
    "sample_passed",
    "sample_failed",
    "basis_passed",
    "basis_failed",
    "p",
    "drop",
)


def _judged(view: CompareView, values) -> JudgedRow:
    test_id, key, state, sp, sf, bp, bf, p, drop = values
    sample, basis = Counts(sp, sf), Counts(bp, bf)
    text = sentence(
        sample_name=view.sample.name, sample=sample, basis_name=view.basis.name, basis=basis, p=p
    )
    return JudgedRow(test_id, key, sample, basis, Judgement(CompareState(state), p, drop), text)


def compare_kept(
    *,
    view: CompareView,
    state: CompareState | None = None,
    offset: int = 0,
    limit: int | None = None,
) -> KeptReport:
    """The view's kept report: ``limit`` rows (None: all) from ``offset`` of those in ``state``
    (None: every state), in the report's order. One query (the rows), by the (view, position)
    or (view, state, position) index."""
    counts = kept_counts(view)
    rows = CompareRow.objects.filter(view=view)
    if state is not None:
        rows = rows.filter(state=state.value)
    rows = rows.order_by("position").values_list(*_ROW_FIELDS)
    page = rows[offset:] if limit is None else rows[offset : offset + limit]
    return KeptReport(
        view=view,
        rules=rules_of_settings(view.confidence, view.tolerance, view.min_failures),
        computed_at=view.computed_at,
        since=view.computed_since,
        sample_runs=view.sample_runs,
        basis_runs=view.basis_runs,
        counts=counts,
        total=sum(counts.values()) if state is None else counts[state],
        offset=offset,
        rows=[_judged(view, v) for v in page] if view.computed_at is not None else [],
    )


@dataclass(frozen=True)
class TestInView:
    """A test's state in one compare view, for the test page and its API."""

    __test__ = False  # not a pytest test class

    view: CompareView
    row: JudgedRow | None  # None: neither variant passed or failed it in the window

    @property
    def red(self) -> bool:
        return self.row is not None and self.row.state in RED


def compare_states_of_test(*, project: Project, test: TestCase) -> list[TestInView]:
    """The test's kept row in each computed view of the project whose sample ran it (a backend
    of the project: every view's); two queries, the views and the test's rows."""
    views = [v for v in compare_views_of(project=project) if v.computed_at is not None]
    if not views:
        return []
    by_view = {
        view_id: values
        for view_id, *values in CompareRow.objects.filter(
            test=test, view__in=[v.pk for v in views]
        ).values_list("view_id", *_ROW_FIELDS)
    }
    return [
        TestInView(view, _judged(view, by_view[view.pk]) if view.pk in by_view else None)
        for view in views
    ]


@dataclass(frozen=True)
class CompareHeadline:
    """A project's overview headline read from its compare view."""

    view: CompareView
    counts: dict[CompareState, int]

    @property
    def red(self) -> int:
        return sum(self.counts[s] for s in RED)


def compare_headlines(*, projects) -> dict[int, CompareHeadline]:
    """Per project that names a headline compare view, that view's kept figures: no query when
    none does, one otherwise."""
    wanted = [p.headline_compare_view_id for p in projects if p.headline_compare_view_id]
    if not wanted:
        return {}
    views = CompareView.objects.filter(pk__in=wanted).select_related("project", "sample", "basis")
    return {v.project_id: CompareHeadline(v, kept_counts(v)) for v in views}


def compare_views_red(*, project) -> list[CompareHeadline]:
    """``project``'s computed compare views with red tests (regressed or extreme), by name, each
    with its kept figures: what the weekly digest lists. One query."""
    views = (
        CompareView.objects.filter(project=project, computed_at__isnull=False)
        .select_related("sample", "basis")
        .order_by("name")
    )
    found = (CompareHeadline(v, kept_counts(v)) for v in views)
    return [h for h in found if h.red]
