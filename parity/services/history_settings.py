"""Writes of the rules of states from history (docs/history-states.md, "Changing the rules"): a
maintainer's new rules are saved and the stored windows judged again under them at once, so
every surface reads the new states without waiting for the next run."""

import dataclasses
import logging

from django.db import transaction

from parity.engine import project_recompute
from parity.engine.gap_triages import triages_refresh
from parity.engine.history import history_mark_gaps, history_rejudge, history_unmark_gaps
from parity.models import BackendState, Project
from parity.models.projects import project_lock
from parity.pure.history_states import HistoryRules, history_rules_problems

logger = logging.getLogger(__name__)


class HistoryRulesRejected(ValueError):
    """Rules out of their ranges (``parity.pure.history_states.RULE_RANGES``); ``errors`` by
    rule. Nothing was saved."""

    def __init__(self, errors: dict[str, str]):
        super().__init__("; ".join(errors.values()))
        self.errors = errors


def history_rules_save(*, project: Project, rules: HistoryRules) -> Project:
    """Save ``rules`` as the project's and apply them now, under the project lock (a recompute
    waits for this one): on, each backend's stored windows are judged again at its current run
    and the gaps marked flaky or released as after a run (``history_mark_gaps``: a held gap
    whose test left flaky and passes is closed by that run), and the current snapshots
    recounted; turned off, no gap reads flaky and the project is rebuilt, which closes the gaps
    held open while their test was flaky. ``HistoryRulesRejected`` saves nothing."""
    problems = history_rules_problems(rules)
    if problems:
        raise HistoryRulesRejected(problems)
    with transaction.atomic():
        project = project_lock(project_id=project.pk)
        was = HistoryRules.of(project.history_rules)
        project.history_rules = dataclasses.asdict(rules)
        project.save(update_fields=["history_rules"])
        if rules.enabled:
            states = BackendState.objects.filter(project=project, current_run__isnull=False)
            for state in states.select_related("current_run"):
                history_rejudge(run=state.current_run, rules=rules)
                history_mark_gaps(
                    project_id=project.pk,
                    backend_ids=[state.backend_id],
                    cause=state.current_run,
                    reference_id=project.reference_backend_id,
                )
            triages_refresh(project=project)
        elif was.enabled:
            history_unmark_gaps(project_id=project.pk)
            project_recompute(project=project)
    logger.info("project %s: rules of states from history now %s", project.slug, rules)
    return project
