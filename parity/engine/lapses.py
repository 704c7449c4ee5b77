"""Which conditioned triages do not apply on which backends: ``TriageLapse`` rows, one per
(triage, backend) where the triage's condition (``parity.pure.attributes``) does not hold for
the backend's attributes merged with its current run's.

The conditions are evaluated here in Python, not in SQL: a project has a handful of conditioned
triages and backends, and the rule's one spelling stays in ``parity.pure.attributes``. The
gap-matching SQL (``parity.definitions.triage_candidates``) reads the rows. They move when a
backend's current run moves (``lapses_write`` from the recompute's ``triages.lapses`` step)
and when a triage is written (``parity.services.triage``). A backend with no current run gets
no rows: it has no gap for a triage to apply to.
"""

import logging
from collections.abc import Iterable

from parity.models import BackendState, Triage, TriageLapse
from parity.pure.attributes import condition_applies

logger = logging.getLogger(__name__)


def backend_attributes(*, project_id: int, backend_ids: Iterable[int] | None = None) -> dict:
    """Each backend's family (None: its own) and attributes (a variant's defining ones) merged
    with its current run's, for the backends of ``project_id`` (``backend_ids``: those only)
    that have a current run."""
    states = BackendState.objects.filter(backend__project_id=project_id, current_run__isnull=False)
    if backend_ids is not None:
        states = states.filter(backend_id__in=list(backend_ids))
    rows = states.values_list(
        "backend_id", "backend__family_id", "backend__attributes", "current_run__attributes"
    )
    return {backend: (family, {**(own or {}), **(run or {})}) for backend, family, own, run in rows}


def lapses_write(
    *,
    project_id: int,
    backend_ids: Iterable[int] | None = None,
    triage_ids: Iterable[int] | None = None,
) -> set[int]:
    """Bring the lapses of ``backend_ids`` and ``triage_ids`` (None: all) up to date; returns
    the backends whose lapses changed (their gaps' triages need picking again). The caller
    holds the project lock."""
    triages = Triage.objects.filter(project_id=project_id)
    if triage_ids is not None:
        triages = triages.filter(pk__in=list(triage_ids))
    conditioned = list(triages.exclude(condition="").values_list("pk", "condition"))
    existing = TriageLapse.objects.filter(triage__project_id=project_id)
    if triage_ids is not None:
        existing = existing.filter(triage_id__in=list(triage_ids))
    if backend_ids is not None:
        existing = existing.filter(backend_id__in=list(backend_ids))
    if not conditioned and triage_ids is None:
        return set()  # the recompute of a project with no conditioned triage: one query
    # A triage written without a condition (or with it cleared) keeps no rows.
    attributes = (
        backend_attributes(project_id=project_id, backend_ids=backend_ids) if conditioned else {}
    )
    named = _named_backends([triage for triage, _ in conditioned])
    wanted = {
        (triage, backend)
        for triage, condition in conditioned
        for backend, (family, attrs) in attributes.items()
        if _names(named.get(triage), backend, family) and not condition_applies(condition, attrs)
    }
    have = {(t, b): pk for pk, t, b in existing.values_list("pk", "triage_id", "backend_id")}
    gone = [pk for key, pk in have.items() if key not in wanted]
    new = [key for key in wanted if key not in have]
    if gone:
        TriageLapse.objects.filter(pk__in=gone).delete()
    if new:
        TriageLapse.objects.bulk_create(
            [TriageLapse(triage_id=t, backend_id=b) for t, b in sorted(new)]
        )
    changed = {b for (t, b) in have if (t, b) not in wanted} | {b for _, b in new}
    if changed:
        logger.info("lapses moved on backends %s of project %s", sorted(changed), project_id)
    return changed


def _named_backends(triage_ids: list[int]) -> dict[int, set[int]]:
    """The backends each triage names (a triage naming none is absent: it applies on all)."""
    named: dict[int, set[int]] = {}
    if triage_ids:
        through = Triage.backends.through.objects.filter(triage_id__in=triage_ids)
        for triage, backend in through.values_list("triage_id", "backend_id"):
            named.setdefault(triage, set()).add(backend)
    return named


def _names(named: set[int] | None, backend: int, family: int | None) -> bool:
    """Whether a triage naming ``named`` (None: every backend) applies on ``backend``: by its
    name or its family's, as ``parity.definitions.triage_candidates`` matches backends."""
    return named is None or backend in named or family in named
