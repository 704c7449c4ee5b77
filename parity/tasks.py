"""Celery adapters of the parity engine: ids in, the engine does the work.

The run lifecycle (``parity.services.lifecycle``) queues ``run_completed``, so the beat task that
completes quiet runs imports the lifecycle in its body, when it runs, rather than at the top: the
two modules would otherwise import each other. That one deferred import is declared in
``tools/import_cycles.py`` and in the layers contract of .importlinter.
"""

import datetime
import logging

from celery import shared_task
from django.conf import settings
from django.db import DatabaseError, transaction
from django.utils import timezone

from parity import engine
from parity.celery import BROKER_ERRORS, RETRY_ON_DATABASE_ERRORS, task_send
from parity.models import Project, Run
from parity.pure.skip_rules import SkipRulesError
from parity.services import (
    check_runs,
    classification,
    compare_rows,
    issue_sync,
    retention,
    suite_summaries,
    targets,
    triage,
    webhooks,
)
from parity.storage import partitions
from parity.trackers.base import RateLimited, TrackerError, TrackerUnavailable

# Recomputes are idempotent (the same run gives the same tables, no duplicate events), so a
# redelivery after a lost worker (acks_late) or a retry after a database error is harmless.
RETRY = RETRY_ON_DATABASE_ERRORS

logger = logging.getLogger(__name__)


@shared_task(**RETRY)
def run_completed(run_id: int) -> None:
    """Adapter: a run turned complete; recompute parity if it is now its backend's current,
    or, for a probe run (never current), record which exemptions pass now."""
    # Its project and backend are read below (classification, the recompute's first checks).
    run = Run.objects.select_related("project", "backend").filter(pk=run_id).first()
    if run is None:  # deleted since: nothing to do
        return
    # The reasons ingest created since the last pass, before the recompute shows them. Rules
    # that no longer compile (written past the service's checks) must not stop the recompute.
    try:
        classification.reasons_classify(project=run.project)
    except SkipRulesError:
        logger.exception("skip rules of project %s do not compile: not classified", run.project_id)
    if run.probe:
        if engine.probe_outcomes_write(run=run) is not None:
            webhooks_after(run.project_id, webhooks_probed, run.pk)
    else:
        recomputed = engine.parity_recompute(run=run)
        if recomputed is not None:
            webhooks_after(run.project_id, webhooks_recomputed, run.pk, recomputed.backend_ids)
            targets_after(run.project_id)
            compare_views_after(run.project_id, run.backend_id)
    # Every complete run, current or not (a pull request's, a probe): its check run reads the
    # verdict once the recompute above committed.
    if check_runs.check_runs_repo(run.project) is not None:
        transaction.on_commit(lambda: task_send(check_run_post, run.pk))


@shared_task(**RETRY)
def suite_run_finished(run_id: int) -> None:
    """Adapter: a run's uploads were ingested or it completed; apply its suites' finished runs
    to their stored summaries (docs/suites.md), and announce the tier moves they made."""
    deliveries_queue(suite_summaries.suite_run_finish(run_id=run_id))


@shared_task(**RETRY)
def rollups_verify() -> None:
    """Beat: recompute every backend whose roll-ups miss its current run (a lost message, a
    recompute that failed for good), so a wrong current run never stays wrong."""
    for run in engine.stale_current_runs():
        logger.warning(
            "roll-ups of backend %s are stale: recomputing run %s", run.backend_id, run.pk
        )
        recomputed = engine.parity_recompute(run=run)
        if recomputed is not None:
            webhooks_after(run.project_id, webhooks_recomputed, run.pk, recomputed.backend_ids)
            targets_after(run.project_id)
            compare_views_after(run.project_id, run.backend_id)


@shared_task(**RETRY)
def results_expire() -> None:
    """Beat: delete raw results and files past PARITY_RESULTS_KEEP_DAYS, a bounded batch per run."""
    retention.results_expire()


@shared_task(**RETRY)
def raw_files_left_delete() -> None:
    """Beat: delete again the raw files a storage out of reach refused to delete."""
    retention.raw_files_left_delete()


@shared_task(**RETRY)
def partitions_create() -> None:
    """Beat: the day partitions of results for today and the next few days."""
    partitions.partitions_create_ahead()


@shared_task(**RETRY)
def triages_expire() -> None:
    """Beat: re-apply triages where one passed its expiry day, so its gaps count untracked."""
    triage.triages_expire()
    deliveries_queue(webhooks.notices_expiring())


@shared_task(**RETRY)
def issues_sync() -> None:
    """Beat: read this tick's share of the cited issues from their trackers (state, title,
    labels) and re-apply triages where one opened or closed."""
    issue_sync.issues_sync()


# Idempotent (a complete run is left alone), so a redelivery or a retry is harmless.
@shared_task(**RETRY)
def runs_complete_quiet() -> None:
    """Beat: complete the runs CI left open once their uploads have been quiet long enough."""
    from parity.services import lifecycle  # deferred: the lifecycle imports this module

    lifecycle.runs_complete_quiet()


# Webhooks (docs/webhooks.md). The events are recorded by tasks of their own, queued once the
# write that caused them committed, so a recompute never waits on them; each delivery is a task
# whose HTTP attempt happens outside any engine transaction.


def webhooks_after(project_id: int, task, *args) -> None:
    """Queue ``task(*args)`` once the current transaction commits, if the project has an
    active endpoint (with none, the default, nothing is queued)."""
    if webhooks.webhooks_active(project_id=project_id):
        transaction.on_commit(lambda: task_send(task, *args))


def deliveries_queue(delivery_ids: list[int]) -> None:
    """Queue an attempt per delivery once the rows recording them commit."""
    for delivery_id in delivery_ids:
        transaction.on_commit(lambda d=delivery_id: task_send(webhook_deliver, d))


def targets_after(project_id: int) -> None:
    """Queue the assessment of the project's targets once the recompute commits, if it has any
    (with none, one query and nothing queued)."""
    if targets.targets_set(project_id=project_id):
        transaction.on_commit(lambda: task_send(targets_assessed, project_id))


@shared_task(**RETRY)
def targets_assessed(project_id: int) -> None:
    """Adapter: move the project's targets in or out of risk by the snapshots a recompute
    wrote, and announce those that entered it; both commit together, so a retry announces
    each entry once."""
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return
    with transaction.atomic():
        entered = targets.targets_assess(project=project)
        deliveries_queue(webhooks.target_at_risk_notices(project=project, entered=entered))


# Compare views (docs/compare-views.md): a view is computed again by tasks of its own once the
# recompute of a run of its sample or basis committed, debounced by ``compare_rows``'s rule.


def compare_views_after(project_id: int, backend_id: int) -> None:
    """Queue the refresh of the project's compare views of the backend once the recompute
    commits, if it has any (with none, one query and nothing queued)."""
    if compare_rows.compare_views_of_backend(project_id=project_id, backend_id=backend_id):
        transaction.on_commit(lambda: task_send(compare_views_refresh, project_id, backend_id))


@shared_task(**RETRY)
def compare_views_refresh(project_id: int, backend_id: int) -> None:
    """Adapter: compute now the views of the backend last computed long enough ago; queue one
    later refresh of the others (``compare_rows.compare_refresh_plan``)."""
    plan = compare_rows.compare_refresh_plan(project_id=project_id, backend_id=backend_id)
    for view_id, when in plan.later:
        try:
            compare_view_refresh.apply_async((view_id, when.isoformat()), eta=when)
        except BROKER_ERRORS as exc:  # beat's sweep computes it once overdue
            logger.warning("could not queue the refresh of compare view %s: %r", view_id, exc)
    for view_id in plan.now:
        compare_rows.compare_view_refresh_by_id(view_id=view_id)


@shared_task(**RETRY)
def compare_view_refresh(view_id: int, due: str | None = None) -> None:
    """Adapter: compute the view again: the later refresh queued for ``due`` (ISO 8601)."""
    when = datetime.datetime.fromisoformat(due) if due else None
    compare_rows.compare_view_refresh_by_id(view_id=view_id, due=when)


@shared_task(**RETRY)
def compare_views_sweep() -> None:
    """Beat: compute the views never computed, whose queued refresh was lost, or whose window
    moved on (``compare_rows.compare_views_due``)."""
    for view_id in compare_rows.compare_views_due():
        compare_rows.compare_view_refresh_by_id(view_id=view_id)


@shared_task(**RETRY)
def webhooks_recomputed(run_id: int, backend_ids: list[int]) -> None:
    """Adapter: announce the untracked gaps and coverage drop of a committed recompute."""
    deliveries_queue(webhooks.notices_after_recompute(run_id=run_id, backend_ids=backend_ids))


@shared_task(**RETRY)
def webhooks_probed(run_id: int) -> None:
    """Adapter: announce the exemptions a recorded probe run found passing now."""
    deliveries_queue(webhooks.notices_after_probe(run_id=run_id))


# acks_late (the global default): a worker lost mid-attempt rolls its log row back and the
# redelivered copy attempts again; a duplicate copy finds the row locked, done or not yet due.
# The retry sweep sends whatever a lost message left pending.
@shared_task(autoretry_for=(DatabaseError,), retry_backoff=5, max_retries=5)
def webhook_deliver(delivery_id: int) -> None:
    """Adapter: one attempt of a delivery; a retry soon enough is queued with its countdown,
    a later one is left to the sweep (``webhooks_retry``)."""
    delay = webhooks.delivery_attempt(delivery_id=delivery_id)
    if delay is None or delay > webhooks.COUNTDOWN_MAX_SECONDS:
        return
    try:
        webhook_deliver.apply_async((delivery_id,), countdown=delay)
    except BROKER_ERRORS as exc:  # the sweep sends it when due
        logger.warning("could not queue the retry of webhook delivery %s: %r", delivery_id, exc)


@shared_task(**RETRY)
def webhooks_retry() -> None:
    """Beat: attempt every delivery whose next attempt is due."""
    for delivery_id in webhooks.deliveries_due():
        task_send(webhook_deliver, delivery_id)


# Check runs (docs/check-runs.md): one HTTP exchange with GitHub per attempt, outside any
# transaction of the engine's. GitHub down or limiting: attempted again later, with a countdown
# doubling each time; refused, or out of attempts: logged, the run is unaffected.
@shared_task(**RETRY)
def check_run_post(run_id: int, attempt: int = 1) -> None:
    """Adapter: post the run's check run on its commit."""
    try:
        check_runs.check_run_post(run_id=run_id)
    except (TrackerUnavailable, RateLimited) as exc:
        if attempt >= settings.PARITY_CHECK_RUN_MAX_ATTEMPTS:
            logger.warning(
                "check run of run %s not posted after %s attempts: %s", run_id, attempt, exc
            )
            return
        delay = settings.PARITY_CHECK_RUN_RETRY_SECONDS * 2 ** (attempt - 1)
        if isinstance(exc, RateLimited):
            delay = max(delay, (exc.resume_at - timezone.now()).total_seconds())
        logger.info("check run of run %s: %s; attempt %s in %ss", run_id, exc, attempt + 1, delay)
        try:
            check_run_post.apply_async((run_id, attempt + 1), countdown=delay)
        except BROKER_ERRORS as queue_exc:
            logger.warning("could not queue the check run of run %s again: %r", run_id, queue_exc)
    except TrackerError as exc:  # refused, or the App's key unusable
        logger.warning("check run of run %s not posted: %s", run_id, exc)
