"""Version transitions: when a backend's current run moves to a run carrying other attributes
(``rocm`` 7.1 → 7.14), record a ``Transition`` with how many tests went each way between the
two runs (``parity.definitions.transition_tests``) and which conditioned exemptions stopped or
started holding there. Called from the recompute's ``backend.move`` stage, which compares the
two runs' attributes it already read: a move that changed none costs nothing here."""

import logging

from django.db import connection
from psycopg2 import sql

from parity.definitions import OUTCOME_PARAMS, transition_tests
from parity.engine.lapses import _named_backends, _names
from parity.models import Backend, Run, Transition, TransitionKind, Triage
from parity.pure.attributes import condition_applies
from parity.pure.normalize.ids import display_id

logger = logging.getLogger(__name__)


def transition_record(
    *, backend: Backend, before_run_id: int, before: dict, run: Run, changed: dict
) -> Transition:
    """``run`` became ``backend``'s current run after run ``before_run_id`` (whose attributes
    were ``before``), and ``changed`` is what differs (``attributes_changed``)."""
    own = backend.attributes or {}
    transition, _ = Transition.objects.update_or_create(
        to_run=run,
        defaults={
            "project_id": backend.project_id,
            "backend": backend,
            "from_run_id": before_run_id,
            "changed": changed,
            "lapses": _lapses_moved(
                backend=backend,
                before={**own, **before},
                after={**own, **(run.attributes or {})},
            ),
            "at": run.started_at,
            **transition_counts(before_run_id=before_run_id, after_run_id=run.pk),
        },
    )
    logger.info(
        "transition %s of backend %s: run %s -> %s, %s, %s",
        transition.pk,
        backend.pk,
        before_run_id,
        run.pk,
        changed,
        transition.counts,
    )
    return transition


def transition_recount(*, run: Run) -> None:
    """A late shard of a run that made a transition: count its tests again."""
    transition = Transition.objects.filter(to_run=run).first()
    if transition is None:
        return
    counts = transition_counts(before_run_id=transition.from_run_id, after_run_id=run.pk)
    Transition.objects.filter(pk=transition.pk).update(**counts)


def transition_counts(*, before_run_id: int, after_run_id: int) -> dict[str, int]:
    """How many tests moved each way between two runs, by ``TransitionKind``."""
    counts = dict.fromkeys(TransitionKind.values, 0)
    with connection.cursor() as cursor:
        cursor.execute(
            sql.SQL("SELECT kind, count(*) FROM ({moved}) m GROUP BY kind").format(
                moved=transition_tests()
            ),
            {**OUTCOME_PARAMS, "before": before_run_id, "after": after_run_id},
        )
        counts.update(dict(cursor.fetchall()))
    return counts


def _lapses_moved(*, backend: Backend, before: dict, after: dict) -> list[dict]:
    """The conditioned exemptions naming ``backend`` (by name, by family, or naming none)
    whose condition held at ``before`` and not at ``after``, or the reverse."""
    conditioned = list(
        Triage.objects.filter(project_id=backend.project_id)
        .exclude(condition="")
        .order_by("pk")
        .values_list("pk", "match", "condition", "test__file", "test__class_name", "test__name")
    )
    named = _named_backends([row[0] for row in conditioned])
    moved = []
    for pk, match, condition, *test in conditioned:
        if not _names(named.get(pk), backend.pk, backend.family_id):
            continue
        held, holds = condition_applies(condition, before), condition_applies(condition, after)
        if held != holds:
            moved.append(
                {
                    "triage": pk,
                    "match": display_id(*test) if test[0] is not None else match,
                    "condition": condition,
                    "before": held,
                    "after": holds,
                }
            )
    return moved
