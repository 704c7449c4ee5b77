"""The engine's entry point: when a run completes, bring the roll-ups up to date.

If the run is now its backend's current run, that backend's outcomes are replaced by the run's;
then gaps, triage, snapshots and file cells are recomputed for that backend, or for every
backend when it is the reference (everyone is compared with it). A run that is not current (an
older run completing late, another branch) changes nothing. A recompute is idempotent: running
it again for the same run gives the same tables and writes no events.
"""

import logging
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction

from parity.definitions import coverage_dropped
from parity.engine.current import current_outcomes_refresh, current_run_pick
from parity.engine.gap_triages import (
    triages_apply,
    triages_apply_touched,
    triages_mark_stale,
    triages_mark_stale_touched,
)
from parity.engine.gaps import gaps_diff
from parity.engine.owners import owners_add
from parity.engine.rollups import file_cells_write, file_durations_write, reason_daily_write
from parity.engine.snapshots import snapshots_write
from parity.models import (
    Backend,
    BackendState,
    CurrentOutcome,
    FileCell,
    Gap,
    PendingTest,
    Project,
    Run,
)
from parity.models.projects import project_lock

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Recomputed:
    run_id: int
    backend_ids: list[int]
    gaps: dict[str, int]


def parity_recompute(*, run: Run) -> Recomputed | None:
    """Recompute after ``run`` completed; None when the run is not its backend's current run."""
    started = time.monotonic()
    if _superseded(run):
        return None
    with transaction.atomic():
        # Serializes recomputes and triage writes of one project (several workers may finish
        # runs of one project at once); other projects proceed in parallel.
        project = project_lock(project_id=run.project_id)
        backend = run.backend  # read with the run: the recompute needs its id and project only
        current = current_run_pick(project=project, backend=backend)
        if current is None or current.pk != run.pk:
            logger.info("run %s is not the current run of backend %s", run.pk, backend.pk)
            return None
        move = _state_move(backend=backend, run=current)
        reason_daily_write(backend=backend, run=current)
        is_reference = backend.pk == project.reference_backend_id
        if is_reference:
            targets = list(project.backends.values_list("pk", flat=True))
        else:
            targets = [backend.pk]
        gaps = backends_refresh(
            project=project,
            backend_ids=targets,
            cause=current,
            # Every gap was diffed against the reference's last run: only the tests whose
            # outcome changed there can change. (Its first run: every test of every backend.)
            reference_moved_on=is_reference and move.state.previous_run_id is not None,
            # Its every gap was diffed against the run this one replaced: only the tests that
            # can change since are diffed. (Not on a first run.)
            replaced_run_id=None if is_reference else move.replaced,
            # A late shard or a retry: its every gap was diffed against this very run, and
            # only what the shard brought (outcomes, manifest) is diffed again.
            rerun=not is_reference and move.rerun,
        )
        file_durations_write(backend_ids=[backend.pk])
    logger.info(
        "parity recomputed for run %s (backends %s): gaps %s in %.2fs",
        run.pk,
        targets,
        gaps,
        time.monotonic() - started,
    )
    return Recomputed(run_id=run.pk, backend_ids=targets, gaps=gaps)


def _superseded(run: Run) -> bool:
    """Whether a newer complete run of the backend makes this recompute moot, read before the
    project lock: under a backlog, each run of a backend completed after this one queued its
    own recompute, and waiting behind other backends' recomputes (seconds each) only to find
    that out held a worker for nothing. Checked again under the lock."""
    current = current_run_pick(project=run.project, backend=run.backend)
    if current is not None and current.pk != run.pk:
        logger.info("run %s is superseded by run %s: recompute skipped", run.pk, current.pk)
        return True
    return False


@dataclass(frozen=True)
class _Moved:
    state: BackendState
    replaced: int | None  # the run ``run`` replaced now; None: none, or it was current already
    rerun: bool  # ``run`` was current already: a late shard, a retried task


def _state_move(*, backend: Backend, run: Run) -> _Moved:
    """Make ``run`` the backend's current run and refresh its outcomes. When the run was
    already current (a late shard, a retried task), the previous run stays what it was."""
    state, _ = BackendState.objects.select_for_update().get_or_create(
        backend=backend, defaults={"project_id": backend.project_id}
    )
    replaced = None
    rerun = state.current_run_id == run.pk
    if not rerun:
        replaced = state.current_run_id
        if state.current_run_id is not None:
            state.previous_run_id = state.current_run_id
            state.previous_test_count = state.test_count
        state.current_run = run
    state.test_count = current_outcomes_refresh(backend=backend, run=run)
    state.coverage_drop = coverage_dropped(
        previous=state.previous_test_count,
        current=state.test_count,
        percent=settings.PARITY_COVERAGE_DROP_PERCENT,
    )
    state.save()
    return _Moved(state=state, replaced=replaced, rerun=rerun)


def _state_retire(*, backend: Backend) -> None:
    """A backend left with no current run (its project compares another branch now) goes back
    to the roll-ups of one that never ran, so no page shows runs its project no longer
    compares. Its open gaps go with their events: gaps of those runs, never fixed. Its
    snapshots stay, the history of what was compared."""
    for model in (CurrentOutcome, PendingTest, FileCell, BackendState):
        model.objects.filter(backend=backend).delete()
    Gap.objects.filter(backend=backend, closed_at__isnull=True).delete()


def backends_refresh(
    *,
    project: Project,
    backend_ids: list[int],
    cause: Run,
    full: bool = False,
    reference_moved_on: bool = False,
    replaced_run_id: int | None = None,
    rerun: bool = False,
) -> dict[str, int]:
    """Gaps (with events caused by ``cause``), triage, snapshots and file cells of
    ``backend_ids`` against the reference's current outcomes, after ``cause`` became its
    backend's current run. Triages are picked again for the gaps the diff touched and the
    other backends' file cells recount their missing tests only; with ``full``, every open
    gap of ``backend_ids`` is picked again and every cell recounted (every current run may
    have moved). ``reference_moved_on``: ``cause`` is the reference's run and replaced one it
    had, which every gap was diffed against: only the tests whose outcome changed are diffed.
    ``replaced_run_id``: ``cause`` is the run of the one backend of ``backend_ids`` (not the
    reference) and replaced that one, which its every gap was diffed against: only the tests
    that can change since are diffed (``gaps.gaps_diff``). ``rerun``: ``cause`` is that
    backend's current run already, which its every gap was diffed against (a late shard)."""
    reference_run_id = (
        BackendState.objects.filter(backend_id=project.reference_backend_id)
        .values_list("current_run_id", flat=True)
        .first()
    )
    diffed = gaps_diff(
        project=project,
        backend_ids=backend_ids,
        reference_run_id=reference_run_id,
        cause=cause,
        changed_only=reference_moved_on and not full,
        replaced_run_id=None if full else replaced_run_id,
        rerun=rerun and not full,
    )
    if full:
        triages_apply(project_id=project.pk, backend_ids=backend_ids)
        triages_mark_stale(project_id=project.pk)
    else:
        triages_apply_touched(project_id=project.pk)
        triages_mark_stale_touched(project_id=project.pk)
    snapshots_write(project=project, backend_ids=backend_ids, reference_run_id=reference_run_id)
    file_cells_write(
        project_id=project.pk,
        backend_ids=backend_ids,
        outcomes_changed=None if full else [cause.backend_id],
        # Only the scope's tests moved, and the outcomes of parity_outcome_changes.
        deltas=diffed.scoped,
    )
    owners_add(project_id=project.pk, backend_ids=backend_ids)  # files new to the owners roll-up
    return diffed.counts


def project_recompute(*, project: Project) -> None:
    """Rebuild a whole project from its current runs, e.g. after its reference backend or
    default branch changed; a backend left with none retires its roll-ups. Events of the
    rebuild carry the reference's current run."""
    with transaction.atomic():
        project = project_lock(project_id=project.pk)
        runs = {}
        for backend in project.backends.all():
            current = current_run_pick(project=project, backend=backend)
            if current is None:
                _state_retire(backend=backend)
                continue
            _state_move(backend=backend, run=current)
            runs[backend.pk] = current
        if not runs:
            return
        cause = runs.get(project.reference_backend_id) or max(
            runs.values(), key=lambda r: (r.started_at, r.pk)
        )
        backend_ids = list(project.backends.values_list("pk", flat=True))
        backends_refresh(project=project, backend_ids=backend_ids, cause=cause, full=True)
        file_durations_write(backend_ids=backend_ids)
