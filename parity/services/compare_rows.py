"""A compare view's judgement, kept: every test's counts, state and p-value over the view's
window written as ``CompareRow`` rows, with the view's run counts and tests per state, so a page
reads them instead of counting a window of results at each read (docs/compare-views.md).

When a view is computed again (``compare_refresh_plan``): after a run of its sample or basis
completes, at once if the view was last computed at least ``PARITY_COMPARE_REFRESH_SECONDS``
ago; otherwise one refresh is queued for when that much time has passed since, and the runs that
complete meanwhile wait for it. So at 100 runs a day of each variant a view is computed at most
once per that interval, never more than that interval behind its last run. A save of its
settings computes it at once (``compare_view_create``, ``compare_view_update``); beat computes a
view whose queued refresh was lost, and one kept more than a day ago (its window moves on)."""

import datetime
import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, transaction
from django.db.models import Q
from django.utils import timezone

from parity.models import CompareRow, CompareView, Project
from parity.models.sql import model_sql
from parity.read_replica import reads_from
from parity.result_reads.compare import compare_report

logger = logging.getLogger(__name__)

STALE_AFTER = datetime.timedelta(days=1)  # a kept view's window has moved on by then

# Every row of a view in one statement: arrays in, one row per element out.
_INSERT = model_sql(
    """INSERT INTO {row} (view_id, test_id, position, state, sample_passed, sample_failed,
                          basis_passed, basis_failed, p, "drop")
    SELECT %(view)s, t.* FROM unnest(
        %(tests)s::bigint[], %(positions)s::int[], %(states)s::varchar[], %(sp)s::int[],
        %(sf)s::int[], %(bp)s::int[], %(bf)s::int[], %(p)s::float8[], %(drop)s::float8[]
    ) AS t""",
    row=CompareRow,
)


def refresh_gap() -> datetime.timedelta:
    return datetime.timedelta(seconds=settings.PARITY_COMPARE_REFRESH_SECONDS)


def _settings_of(view: CompareView) -> tuple:
    return (
        view.sample_id,
        view.basis_id,
        view.days,
        view.confidence,
        view.tolerance,
        view.min_failures,
    )


def compare_view_refresh(
    *,
    view: CompareView,
    now: datetime.datetime | None = None,
    due: datetime.datetime | None = None,
) -> bool:
    """Compute the view's report from its window's results (on the primary: a replica behind
    would miss the run that asked) and keep it in place of the last. ``due``: the refresh queued
    for then, which this one is (Celery may run it early: eagerly, without a broker). False if
    the view is gone or its settings changed while it was read (the save that changed them kept
    its own)."""
    now = now or timezone.now()
    with reads_from(DEFAULT_DB_ALIAS):
        report = compare_report(view=view, now=now)
    rows = report.rows
    with transaction.atomic():
        locked = CompareView.objects.select_for_update().filter(pk=view.pk).first()
        if locked is None or _settings_of(locked) != _settings_of(view):
            return False
        CompareRow.objects.filter(view=locked).delete()
        if rows:
            with connection.cursor() as cursor:
                cursor.execute(
                    _INSERT,
                    {
                        "view": locked.pk,
                        "tests": [r.test_id for r in rows],
                        "positions": list(range(len(rows))),
                        "states": [r.state.value for r in rows],
                        "sp": [r.sample.passed for r in rows],
                        "sf": [r.sample.failed for r in rows],
                        "bp": [r.basis.passed for r in rows],
                        "bf": [r.basis.failed for r in rows],
                        "p": [r.judgement.p for r in rows],
                        "drop": [r.judgement.drop for r in rows],
                    },
                )
        locked.computed_at = now
        locked.computed_since = report.since
        locked.sample_runs, locked.basis_runs = report.sample_runs, report.basis_runs
        locked.state_counts = {s.value: n for s, n in report.counts.items()}
        # A refresh due before this one began, or the one this is, is done by it; one queued
        # for later since is still due.
        done = now if due is None else max(now, due)
        if locked.refresh_due_at is not None and locked.refresh_due_at <= done:
            locked.refresh_due_at = None
        locked.save(
            update_fields=[
                "computed_at",
                "computed_since",
                "sample_runs",
                "basis_runs",
                "state_counts",
                "refresh_due_at",
            ]
        )
    view.computed_at, view.computed_since = locked.computed_at, locked.computed_since
    view.sample_runs, view.basis_runs = locked.sample_runs, locked.basis_runs
    view.state_counts, view.refresh_due_at = locked.state_counts, locked.refresh_due_at
    logger.info("compare view %s kept: %s tests", view.pk, len(rows))
    return True


def compare_views_of_backend(*, project_id: int, backend_id: int) -> bool:
    """Whether a view of the project has the backend as its sample or basis (one query)."""
    return (
        CompareView.objects.filter(project_id=project_id)
        .filter(Q(sample_id=backend_id) | Q(basis_id=backend_id))
        .exists()
    )


@dataclass(frozen=True)
class RefreshPlan:
    now: list[int]  # views to compute at once
    later: list[tuple[int, datetime.datetime]]  # (view, when) to queue


def compare_refresh_plan(
    *, project_id: int, backend_id: int, now: datetime.datetime | None = None
) -> RefreshPlan:
    """After a run of ``backend_id`` completed: which of the views it is a variant of to compute
    now and which to queue for later (the module's rule). Each view's row is locked while it is
    decided, so two runs completing together plan one refresh, not two."""
    now = now or timezone.now()
    gap = refresh_gap()
    at_once, later = [], []
    with transaction.atomic():
        views = (
            CompareView.objects.select_for_update()
            .filter(project_id=project_id)
            .filter(Q(sample_id=backend_id) | Q(basis_id=backend_id))
            .order_by("pk")
        )
        for view in views:
            due = view.refresh_due_at
            if due is not None and due > now:
                continue  # a refresh is queued: it will read this run too
            if due is None and (view.computed_at is None or view.computed_at <= now - gap):
                when = now  # computed now, by the caller
                at_once.append(view.pk)
            else:
                # Computed within the gap, or a refresh under way that may have begun before
                # this run committed: one more, once the gap has passed.
                when = max(now, (view.computed_at or now) + gap) if due is None else now + gap
                later.append((view.pk, when))
            view.refresh_due_at = when
            view.save(update_fields=["refresh_due_at"])
    return RefreshPlan(at_once, later)


def compare_view_refresh_by_id(*, view_id: int, due: datetime.datetime | None = None) -> bool:
    view = CompareView.objects.select_related("project", "sample", "basis").filter(pk=view_id)
    found = view.first()
    return found is not None and compare_view_refresh(view=found, due=due)


def compare_views_due(*, now: datetime.datetime | None = None) -> list[int]:
    """Beat: views never computed, whose queued refresh is overdue by another gap (its message
    was lost), or last computed more than a day ago."""
    now = now or timezone.now()
    return list(
        CompareView.objects.filter(
            Q(computed_at__isnull=True)
            | Q(refresh_due_at__lt=now - refresh_gap())
            | Q(computed_at__lt=now - STALE_AFTER)
        )
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def compare_headline_set(*, project: Project, view: CompareView | None) -> None:
    """The overview's headline for ``project`` read from ``view`` (None: the default)."""
    if view is not None and view.project_id != project.pk:
        raise ValueError("The headline's compare view must be the project's.")
    project.headline_compare_view = view
    project.save(update_fields=["headline_compare_view"])
    logger.info("project %s headline: compare view %s", project.slug, view and view.pk)
