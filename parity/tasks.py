"""Celery adapters of the parity engine: ids in, the engine does the work.

The run lifecycle (``parity.services.lifecycle``) queues ``run_completed``, so the beat task that
completes quiet runs imports the lifecycle in its body, when it runs, rather than at the top: the
two modules would otherwise import each other. That one deferred import is declared in
``tools/import_cycles.py`` and in the layers contract of .importlinter.
"""

import logging

from celery import shared_task

from parity import engine
from parity.celery import RETRY_ON_DATABASE_ERRORS
from parity.models import Run
from parity.pure.skip_rules import SkipRulesError
from parity.services import classification, issue_sync, retention, triage

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
        engine.probe_outcomes_write(run=run)
    else:
        engine.parity_recompute(run=run)


@shared_task(**RETRY)
def rollups_verify() -> None:
    """Beat: recompute every backend whose roll-ups miss its current run (a lost message, a
    recompute that failed for good), so a wrong current run never stays wrong."""
    for run in engine.stale_current_runs():
        logger.warning(
            "roll-ups of backend %s are stale: recomputing run %s", run.backend_id, run.pk
        )
        engine.parity_recompute(run=run)


@shared_task(**RETRY)
def results_expire() -> None:
    """Beat: delete raw results and files past PARITY_RESULTS_KEEP_DAYS, a bounded batch per run."""
    retention.results_expire()


@shared_task(**RETRY)
def triages_expire() -> None:
    """Beat: re-apply triages where one passed its expiry day, so its gaps count untracked."""
    triage.triages_expire()


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
