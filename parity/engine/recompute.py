"""The engine's entry point: when a run completes, bring the roll-ups up to date.

If the run is now its backend's current run, that backend's outcomes are replaced by the run's
(``backend.move``); then gaps, triage, snapshots and file cells are recomputed for that backend,
or for every backend when it is the reference (everyone is compared with it). A run that is not
current (an older run completing late, another branch) changes nothing. A recompute is
idempotent: running it again for the same run gives the same tables and writes no events.

How the backend's state moved decides the recompute's scope once (``scope_pick``, the kinds in
``parity.engine.scope``); the scope picks its list of steps (``STEPS``), which
``parity.engine.steps`` runs in order, each naming the temporary tables it reads and writes.
"""

import functools
import logging
import time
from dataclasses import dataclass, field
from functools import cached_property

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F

from parity.definitions import INFRA_LACKING_SQL, coverage_dropped
from parity.engine import temp_tables as t
from parity.engine.current import current_outcomes_refresh, current_run_pick
from parity.engine.gap_triages import (
    triages_apply,
    triages_apply_touched,
    triages_mark_stale,
    triages_mark_stale_touched,
)
from parity.engine.gaps import (
    GapDiff,
    desired_write,
    gap_diff_plan,
    gap_moves_write,
    gaps_write,
    nightly_bounded,
    nightly_scope_write,
    rerun_scope_write,
)
from parity.engine.history import (
    history_forget,
    history_mark_gaps,
    history_update,
)
from parity.engine.lapses import lapses_write
from parity.engine.owners import owners_add
from parity.engine.pending import pending_split
from parity.engine.presence import presence_forget
from parity.engine.reference_suites import reference_suites_write
from parity.engine.rollups import file_cells_write, file_durations_write, reason_daily_write
from parity.engine.scope import Scope, ScopeKind
from parity.engine.snapshots import snapshots_write
from parity.engine.steps import Step, steps_run
from parity.engine.transitions import transition_record, transition_recount
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
from parity.pure.attributes import attributes_changed
from parity.pure.history_states import HistoryRules

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Recomputed:
    run_id: int
    backend_ids: list[int]
    gaps: dict[str, int]


@dataclass
class Recompute:
    """What the steps of one recompute share: the gaps of ``backend_ids`` are diffed within
    ``scope`` after ``cause`` became its backend's current run; ``moved_ids``: the backends
    whose current run moved."""

    project: Project
    backend_ids: list[int]
    moved_ids: list[int]
    cause: Run
    reference_run_id: int | None
    scope: Scope
    counts: dict[str, int] = field(default_factory=dict)  # gaps closed, changed, opened

    @cached_property
    def diff(self) -> GapDiff:
        return gap_diff_plan(
            project=self.project,
            backend_ids=self.backend_ids,
            reference_run_id=self.reference_run_id,
            cause=self.cause,
            table=self.scope.table,
            replaced_run_id=self.scope.replaced_run_id,
        )


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
        move = _Moving(backend=backend, run=current, rules=HistoryRules.of(project.history_rules))
        steps_run(move, (BACKEND_MOVE, TRANSITION, HISTORY))
        is_reference = backend.pk == project.reference_backend_id
        if is_reference:
            targets = list(project.backends.values_list("pk", flat=True))
        else:
            targets = [backend.pk]
        reference_run_id = _reference_run(project)
        recompute = Recompute(
            project=project,
            backend_ids=targets,
            moved_ids=[backend.pk],
            cause=current,
            reference_run_id=reference_run_id,
            scope=scope_pick(
                project=project,
                cause=current,
                move=move.moved,
                is_reference=is_reference,
                has_reference=reference_run_id is not None,
            ),
        )
        steps_run(recompute, STEPS[recompute.scope.kind])
        if is_reference:  # which suite each of its tests is in (docs/suites.md)
            reference_suites_write(project_id=project.pk, run_id=current.pk)
    logger.info(
        "parity recomputed for run %s (backends %s, %s): gaps %s in %.2fs",
        run.pk,
        targets,
        recompute.scope,
        recompute.counts,
        time.monotonic() - started,
    )
    return Recomputed(run_id=run.pk, backend_ids=targets, gaps=recompute.counts)


def project_recompute(*, project: Project) -> None:
    """Rebuild a whole project from its current runs, e.g. after its reference backend or
    default branch changed; a backend left with none retires its roll-ups. Events of the
    rebuild carry the reference's current run."""
    with transaction.atomic():
        project = project_lock(project_id=project.pk)
        rebuild = _Rebuild(project=project)
        steps_run(rebuild, (BACKENDS_MOVE,))
        runs = rebuild.runs
        reference_suites_write(
            project_id=project.pk,
            run_id=runs[project.reference_backend_id].pk
            if project.reference_backend_id in runs
            else None,
        )
        if not runs:
            return
        cause = runs.get(project.reference_backend_id) or max(
            runs.values(), key=lambda r: (r.started_at, r.pk)
        )
        backend_ids = list(project.backends.values_list("pk", flat=True))
        recompute = Recompute(
            project=project,
            backend_ids=backend_ids,
            moved_ids=backend_ids,
            cause=cause,
            reference_run_id=_reference_run(project),
            scope=Scope.rebuild(),
        )
        steps_run(recompute, STEPS[ScopeKind.REBUILD])


def scope_pick(
    *, project: Project, cause: Run, move: "_Moved", is_reference: bool, has_reference: bool
) -> Scope:
    """The tests the recompute after ``cause`` diffs, from how its backend's state moved
    (``move``): the one place a recompute's scope is decided."""
    if is_reference:
        # Every gap was diffed against the reference's last run: only the tests whose outcome
        # changed there can change. (Its first run: every test of every backend.)
        if move.state.previous_run_id is None:
            return Scope.every_test()
        return Scope.reference_moved_on()
    if move.rerun:
        # A late shard or a retry: its every gap was diffed against this very run, and only
        # what the shard brought (outcomes, manifest) is diffed again.
        if not has_reference:
            return Scope.every_test(instead_of=ScopeKind.LATE_SHARD)
        return Scope.late_shard()
    if move.replaced is None:  # the backend's first run
        return Scope.every_test()
    # Its every gap was diffed against the run this one replaced: only the tests that can
    # change since are diffed, where that set can be bounded (``gaps._NIGHTLY_SCOPE_SQL``).
    reference_changed = (
        nightly_bounded(project=project, cause=cause, replaced_run_id=move.replaced)
        if has_reference
        else None
    )
    if reference_changed is None:
        return Scope.every_test(instead_of=ScopeKind.NIGHTLY)
    return Scope.nightly(move.replaced, reference_changed=reference_changed)


def _reference_run(project: Project) -> int | None:
    return (
        BackendState.objects.filter(backend_id=project.reference_backend_id)
        .values_list("current_run_id", flat=True)
        .first()
    )


def _superseded(run: Run) -> bool:
    """Whether a newer complete run of the backend makes this recompute moot, read before the
    project lock: under a backlog, each run of a backend completed after this one queued its
    own recompute, and waiting behind other backends' recomputes only to find that out held a
    worker for nothing. Checked again under the lock."""
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
    replaced_attributes: dict | None = None  # the attributes of the run ``run`` replaced
    previous_attributes: dict | None = None  # of the state's previous run, on a rerun


def _state_move(*, backend: Backend, run: Run) -> _Moved:
    """Make ``run`` the backend's current run and refresh its outcomes. When the run was
    already current (a late shard, a retried task), the previous run stays what it was."""
    # The current and previous runs' attributes come with the state (a version transition
    # compares them with the run's); only the state's row is locked.
    states = BackendState.objects.select_for_update(of=("self",)).annotate(
        current_attributes=F("current_run__attributes"),
        previous_attributes=F("previous_run__attributes"),
    )
    state, _ = states.get_or_create(backend=backend, defaults={"project_id": backend.project_id})
    replaced = None
    rerun = state.current_run_id == run.pk
    if not rerun:
        replaced = state.current_run_id
        if state.current_run_id is not None:
            state.previous_run_id = state.current_run_id
            state.previous_test_count = state.test_count
        state.current_run = run
    state.test_count = current_outcomes_refresh(backend=backend, run=run)
    state.coverage_drop = _coverage_dropped(state=state, run=run)
    state.save()
    return _Moved(
        state=state,
        replaced=replaced,
        rerun=rerun,
        replaced_attributes=getattr(state, "current_attributes", None),
        previous_attributes=getattr(state, "previous_attributes", None),
    )


def _coverage_dropped(*, state: BackendState, run: Run) -> bool:
    """``coverage_dropped`` of the backend's current run ``run`` against its previous one. The
    tests that infrastructure lost are counted only when the run dropped coverage counting them
    as lost: most runs did not, and pay no query for them."""
    drop = functools.partial(
        coverage_dropped,
        previous=state.previous_test_count,
        current=state.test_count,
        percent=settings.PARITY_COVERAGE_DROP_PERCENT,
    )
    if not drop(infra_lacking=0):
        return False
    params = {"project": run.project_id, "run": run.pk, "previous": state.previous_run_id}
    with connection.cursor() as cursor:
        cursor.execute(INFRA_LACKING_SQL, params)
        (infra_lacking,) = cursor.fetchone()
    return drop(infra_lacking=infra_lacking)


def _state_retire(*, backend: Backend) -> None:
    """A backend left with no current run (its project compares another branch now) goes back
    to the roll-ups of one that never ran, so no page shows runs its project no longer
    compares. Its open gaps go with their events: gaps of those runs, never fixed. Its
    snapshots stay, the history of what was compared."""
    presence_forget(backend_id=backend.pk)
    history_forget(backend_id=backend.pk)
    for model in (CurrentOutcome, PendingTest, FileCell, BackendState):
        model.objects.filter(backend=backend).delete()
    Gap.objects.filter(backend=backend, closed_at__isnull=True).delete()


# The steps, each one module's writes for the recompute (``Recompute``) in its scope. Before
# them the backend's state moves (``backend.move``: its changed outcomes in
# ``parity_outcome_changes``), which decides the scope; a rebuild moves every backend's.


@dataclass
class _Moving:
    """``backend.move``'s state: ``run`` becomes ``backend``'s current run."""

    backend: Backend
    run: Run
    rules: HistoryRules  # the project's rules of states from history
    moved: _Moved | None = None


def _backend_move(m: _Moving) -> None:
    m.moved = _state_move(backend=m.backend, run=m.run)


def _transition(m: _Moving) -> None:
    """A move to a run carrying other attributes than the run it replaced is a version
    transition: one comparison of the two runs' attributes, read with the state. A late shard
    of the run that made one (its attributes differ from the previous run's) counts its tests
    again."""
    moved = m.moved
    if moved.rerun:
        previous = moved.previous_attributes
        if moved.state.previous_run_id and attributes_changed(
            previous or {}, m.run.attributes or {}
        ):
            transition_recount(run=m.run)
        return
    if moved.replaced is None:
        return
    before = moved.replaced_attributes or {}
    changed = attributes_changed(before, m.run.attributes or {})
    if changed:
        transition_record(
            backend=m.backend,
            before_run_id=moved.replaced,
            before=before,
            run=m.run,
            changed=changed,
        )


def _history(m: _Moving) -> None:
    """The run's outcomes enter the backend's windows (``parity.engine.history``); a late
    shard's do not: its run is in them already."""
    if m.moved.rerun or not m.rules.enabled:
        return
    history_update(run=m.run, total=m.moved.state.test_count, rules=m.rules)


@dataclass
class _Rebuild:
    """``backends.move``'s state: each backend of ``project`` and its current run."""

    project: Project
    runs: dict[int, Run] = field(default_factory=dict)


def _backends_move(r: _Rebuild) -> None:
    for backend in r.project.backends.all():
        current = current_run_pick(project=r.project, backend=backend)
        if current is None:
            _state_retire(backend=backend)
            continue
        _state_move(backend=backend, run=current)
        r.runs[backend.pk] = current


BACKEND_MOVE = Step("backend.move", _backend_move, writes=(t.OUTCOME_CHANGES,))
# A move to a run of other attributes records a version transition (``parity.engine.transitions``).
TRANSITION = Step("transitions.detect", _transition)
# The run's outcomes enter the windows of states from history (``parity.engine.history``).
HISTORY = Step("history.update", _history, reads=(t.OUTCOME_CHANGES,))
# Each backend's changes overwrite the last's; no step of a rebuild reads them.
BACKENDS_MOVE = Step("backends.move", _backends_move, scratch=(t.OUTCOME_CHANGES,))


def _reason_daily(r: Recompute) -> None:
    reason_daily_write(run=r.cause)


def _diff_scope(r: Recompute) -> None:
    with connection.cursor() as cursor:
        if r.scope.kind is ScopeKind.NIGHTLY:
            nightly_scope_write(cursor, r.diff, reference_changed=r.scope.reference_changed)
        else:
            rerun_scope_write(cursor, r.diff)


def _desired(r: Recompute) -> None:
    with connection.cursor() as cursor:
        desired_write(cursor, r.diff)


def _pending(r: Recompute) -> None:
    with connection.cursor() as cursor:
        pending_split(cursor, r.diff.params, scope=r.diff.table)


def _moves_before(r: Recompute) -> None:
    with connection.cursor() as cursor:
        gap_moves_write(cursor, r.diff, before=True)


def _gaps(r: Recompute) -> None:
    with connection.cursor() as cursor:
        r.counts = gaps_write(cursor, r.diff)


def _moves_after(r: Recompute) -> None:
    with connection.cursor() as cursor:
        gap_moves_write(cursor, r.diff, before=False)


def _triages_touched(r: Recompute) -> None:
    triages_apply_touched(project_id=r.project.pk)


def _stale_touched(r: Recompute) -> None:
    triages_mark_stale_touched(project_id=r.project.pk)


def _triages_all(r: Recompute) -> None:
    triages_apply(project_id=r.project.pk, backend_ids=r.backend_ids)


def _stale_all(r: Recompute) -> None:
    triages_mark_stale(project_id=r.project.pk)


def _history_mark(r: Recompute) -> None:
    if not HistoryRules.of(r.project.history_rules).enabled:
        return
    released = history_mark_gaps(
        project_id=r.project.pk,
        backend_ids=r.backend_ids,
        cause=r.cause,
        reference_id=r.project.reference_backend_id,
    )
    if released:  # closed by this run as the diff's closes are
        r.counts["closed"] = r.counts.get("closed", 0) + released


def _lapses(r: Recompute) -> None:
    """A moved backend's run may carry other attributes (an upgrade): the conditioned triages
    that hold there change, and so may the triage of any open gap of it, touched or not."""
    changed = lapses_write(project_id=r.project.pk, backend_ids=r.moved_ids)
    if changed:
        triages_apply(project_id=r.project.pk, backend_ids=sorted(changed))
        triages_mark_stale(project_id=r.project.pk)


def _snapshots(r: Recompute) -> None:
    snapshots_write(
        project=r.project, backend_ids=r.backend_ids, reference_run_id=r.reference_run_id
    )


def _file_cells(r: Recompute) -> None:
    """Every cell of the moved backend recounted, the others' missing counts; in a scoped
    diff, the cells move by what moved instead (``parity_outcome_changes``, the gap moves).
    A rebuild recounts every cell: every current run may have moved."""
    rebuild = r.scope.kind is ScopeKind.REBUILD
    file_cells_write(
        project_id=r.project.pk,
        backend_ids=r.backend_ids,
        outcomes_changed=None if rebuild else r.moved_ids,
        deltas=r.scope.table is not None,
    )


def _owners(r: Recompute) -> None:
    owners_add(project_id=r.project.pk, backend_ids=r.backend_ids)  # files new to the roll-up


def _file_durations(r: Recompute) -> None:
    file_durations_write(backend_ids=r.moved_ids)


def _diff(table: str | None) -> tuple[Step, ...]:
    """The gap diff's steps over the tests of ``table`` (None: every test). Each statement
    joins whole sets (a backend's tests, its open gaps): hash joins. The tests of a scope
    table alone are probed one by one, whatever the settings."""
    scope = (table,) if table else ()
    desired = Step(
        "gaps.desired",
        _desired,
        reads=scope,
        writes=(t.DESIRED, t.GAPS_TOUCHED),
        scratch=(t.ABSENT,),
        hash_joins=True,
    )
    pending = Step(
        "pending.split",
        _pending,
        reads=(t.DESIRED, *scope),
        writes=(t.DESIRED,),
        scratch=(t.REFERENCE_THEN,),
        hash_joins=True,
    )
    write = Step(
        "gaps.write",
        _gaps,
        reads=(t.DESIRED, *scope),
        writes=(t.GAPS_TOUCHED,),
        hash_joins=True,
    )
    if not table:
        return desired, pending, write
    # The absent gaps among the scope's tests, before and after: the file cells move by them.
    before = Step(
        "gaps.moves_before", _moves_before, reads=scope, writes=(t.GAP_MOVES,), hash_joins=True
    )
    after = Step(
        "gaps.moves_after",
        _moves_after,
        reads=(*scope, t.GAP_MOVES),
        writes=(t.GAP_MOVES,),
        hash_joins=True,
    )
    return desired, pending, before, write, after


REASON_DAILY = Step("rollups.reason_daily", _reason_daily)
# The tests a nightly or a late shard can have changed.
SCOPE_WRITE = Step(
    "gaps.scope",
    _diff_scope,
    reads=(t.OUTCOME_CHANGES,),
    writes=(t.DIFF_SCOPE,),
    hash_joins=True,
)
# Only the gaps the diff touched can need another triage...
TRIAGES_TOUCHED = Step("triages.apply", _triages_touched, reads=(t.GAPS_TOUCHED,))
# ...unless every current run may have moved (a rebuild): every open gap's triage is picked.
TRIAGES_ALL = Step("triages.apply", _triages_all)
# Stale triages are marked after the snapshots: those write what the declarations an agreement
# score uses cover, which keeps them from being stale (``parity.engine.gap_triages``).
STALE_TOUCHED = Step("triages.mark_stale", _stale_touched, reads=(t.GAPS_TOUCHED,))
STALE_ALL = Step("triages.mark_stale", _stale_all)
# Conditioned triages that stop or start holding on the moved backends, and their gaps.
LAPSES = Step("triages.lapses", _lapses)
# The open gaps of tests flaky on their backend are flaky, before the snapshots count them.
HISTORY_MARK = Step("history.mark", _history_mark)
SNAPSHOTS = Step("snapshots.write", _snapshots)
FILE_CELLS = Step("rollups.file_cells", _file_cells)
# In a scoped diff the cells move by what moved.
FILE_CELLS_MOVED = Step(
    "rollups.file_cells",
    _file_cells,
    reads=(t.OUTCOME_CHANGES, t.GAP_MOVES),
    scratch=(t.CELL_DELTAS,),
)
OWNERS = Step("owners.add", _owners)
FILE_DURATIONS = Step("rollups.file_durations", _file_durations)
_AFTER = (OWNERS, FILE_DURATIONS)

# Each scope's steps, in order, after its backend moved (``BACKEND_MOVE``; a rebuild's
# ``BACKENDS_MOVE``).
STEPS: dict[ScopeKind, tuple[Step, ...]] = {
    ScopeKind.REBUILD: (
        *_diff(None),
        TRIAGES_ALL,
        LAPSES,
        HISTORY_MARK,
        SNAPSHOTS,
        STALE_ALL,
        FILE_CELLS,
        *_AFTER,
    ),
    ScopeKind.EVERY_TEST: (
        REASON_DAILY,
        *_diff(None),
        TRIAGES_TOUCHED,
        LAPSES,
        HISTORY_MARK,
        SNAPSHOTS,
        STALE_TOUCHED,
        FILE_CELLS,
        *_AFTER,
    ),
    ScopeKind.REFERENCE_MOVED_ON: (
        REASON_DAILY,
        *_diff(t.OUTCOME_CHANGES),
        TRIAGES_TOUCHED,
        LAPSES,
        HISTORY_MARK,
        SNAPSHOTS,
        STALE_TOUCHED,
        FILE_CELLS_MOVED,
        *_AFTER,
    ),
    ScopeKind.NIGHTLY: (
        REASON_DAILY,
        SCOPE_WRITE,
        *_diff(t.DIFF_SCOPE),
        TRIAGES_TOUCHED,
        LAPSES,
        HISTORY_MARK,
        SNAPSHOTS,
        STALE_TOUCHED,
        FILE_CELLS_MOVED,
        *_AFTER,
    ),
    ScopeKind.LATE_SHARD: (
        REASON_DAILY,
        SCOPE_WRITE,
        *_diff(t.DIFF_SCOPE),
        TRIAGES_TOUCHED,
        LAPSES,
        HISTORY_MARK,
        SNAPSHOTS,
        STALE_TOUCHED,
        FILE_CELLS_MOVED,
        *_AFTER,
    ),
}
