"""A plain-Python model of the rules ``parity.definitions`` states once in SQL: which run may be
current (and which is), a test's outcome in a run, a gap and its state (pending and absent
included), and the triage that applies. Plain data in, plain answers out: no database, no
Django. ``tests/parity/test_rules_model.py`` holds the three users of those rules to it: the
engine's ``Gap`` and ``PendingTest`` rows after ``parity_recompute``, the verdict of a run
(``parity.result_reads.verdict``) and the aligned view (``parity.result_reads.aligned``);
``tests/parity/test_surfaces_agree.py`` holds every surface to ``standings`` (where each test
stands on each backend: declared, lost, pending, or a gap with its triage, conditions held to
the backend's attributes) and the verdict to ``uncovered``.

The model is written from the rules as ``ARCHITECTURE.md`` and the docstrings state them, not
from the SQL: each function is the slow, obvious reading of one rule.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field, replace

from parity.pure.attributes import condition_applies
from parity.pure.globs import key_matches

PASSED, SKIPPED, FAILED, ERROR = 1, 2, 3, 4  # parity.models.Outcome's codes
_STATE_OF = {SKIPPED: "skipped", FAILED: "failed", ERROR: "error"}
# A test's outcome in a run when it has several results there: error beats failed beats passed
# beats skipped; among equals, the last result written.
_RANK = {ERROR: 4, FAILED: 3, PASSED: 2, SKIPPED: 1}
NO_BRANCH = ""


@dataclass(frozen=True)
class Result:
    id: int
    test: int
    outcome: int
    reason: int | None = None


@dataclass(frozen=True)
class Run:
    id: int
    backend: int
    started_at: datetime.datetime
    commit: str = ""
    branch: str = NO_BRANCH
    complete: bool = True
    probe: bool = False
    results_expired: bool = False
    results: tuple[Result, ...] = ()
    manifest: dict[str, str] = field(default_factory=dict)  # file -> state, files not "ran"


@dataclass(frozen=True)
class Triage:
    id: int
    kind: str  # tracked, intended, quarantine, not_applicable
    created_at: datetime.datetime
    test: int | None = None
    reason: int | None = None
    match_regex: str = ""  # the pattern's regex (``parity.pure.globs.pattern_regex``)
    backends: frozenset[int] = frozenset()  # none: every backend (a family: its variants too)
    expires_on: datetime.date | None = None
    condition: str = ""  # applies where it holds for the backend's attributes; "": everywhere


@dataclass(frozen=True)
class World:
    """A project's inputs: its runs, tests (id -> (key, file)), reference backend, default
    branch and triages, and the reference's runs in the order each became its current run
    (what a test's ``since`` there is read from)."""

    runs: tuple[Run, ...]
    tests: dict[int, tuple[str, str]]
    reference: int
    default_branch: str
    triages: tuple[Triage, ...] = ()
    reference_history: tuple[int, ...] = ()
    family: dict[int, int] = field(default_factory=dict)  # variant -> its family
    attributes: dict[int, dict] = field(default_factory=dict)  # backend -> its own attributes
    run_attributes: dict[int, dict] = field(default_factory=dict)  # run -> the attributes sent
    history_states: bool = False  # the project keeps states from history (they are opt-in)
    # Triages a maintainer removed (deleted or set aside), gone from ``triages``: each with when.
    removed: tuple[tuple[Triage, datetime.datetime], ...] = ()
    # Suites (docs/suites.md): run -> test -> the suite the upload that had it named; run -> the
    # suites its uploads name (results or not); the suites the project's map names.
    test_suites: dict[int, dict[int, str]] = field(default_factory=dict)
    run_suites: dict[int, frozenset[str]] = field(default_factory=dict)
    mapped_suites: frozenset[str] = frozenset()

    def run(self, run_id: int) -> Run:
        return next(r for r in self.runs if r.id == run_id)


# --- Which run may be current, and which is ---------------------------------------------------


def may_be_current(run: Run, default_branch: str) -> bool:
    return not run.probe and run.branch in (default_branch, NO_BRANCH)


def current_run(world: World, backend: int, *, at: datetime.datetime | None = None) -> Run | None:
    """The backend's latest complete run that may be current (started no later than ``at``)."""
    runs = [
        r
        for r in world.runs
        if r.backend == backend
        and r.complete
        and may_be_current(r, world.default_branch)
        and (at is None or r.started_at <= at)
    ]
    return max(runs, key=lambda r: (r.started_at, r.id), default=None)


# --- A test's outcome in a run ------------------------------------------------------------------


def outcomes(run: Run) -> dict[int, tuple[int, int | None]]:
    """test -> (outcome, reason) of one run."""
    best: dict[int, Result] = {}
    for r in run.results:
        old = best.get(r.test)
        if old is None or (_RANK[r.outcome], r.id) > (_RANK[old.outcome], old.id):
            best[r.test] = r
    return {t: (r.outcome, r.reason) for t, r in best.items()}


# --- A gap ----------------------------------------------------------------------------------------


def gap(outcome: int | None, *, absent: str | None = None, pending: bool = False) -> str | None:
    """The gap of a test the reference passes, whose outcome in the backend's run is
    ``outcome`` (None: the run lacks it): None when the run passes it; skipped, failed, error;
    lacking it, pending when ``pending``, else why it is absent (the manifest's state of its
    file) or missing."""
    if outcome == PASSED:
        return None
    if outcome is not None:
        return _STATE_OF[outcome]
    if pending:
        return "pending"
    return absent or "missing"


def since(world: World) -> dict[int, datetime.datetime]:
    """When the reference first ran each test of its current run: the start of the first of
    the unbroken line of its current runs (in the order they became current) that had it."""
    first: dict[int, datetime.datetime] = {}
    for run_id in world.reference_history:
        run = world.run(run_id)
        tests = set(outcomes(run))
        first = {t: first.get(t, run.started_at) for t in tests}
    return first


@dataclass(frozen=True)
class BackendGaps:
    gaps: dict[int, tuple[str, int | None]]  # test -> (state, reason)
    pending: set[int]


def engine_gaps(world: World) -> dict[int, BackendGaps]:
    """Each backend's open gaps and pending tests, against the reference's current run, and,
    where the project keeps states from history, the gaps held open while their test is flaky
    (``held``) with the state and reason their last failure gave them."""
    found = _run_gaps(world)
    for (backend, test), kept in held(world).items():
        found[backend].gaps[test] = kept
    return found


def _run_gaps(world: World) -> dict[int, BackendGaps]:
    """Each backend's gaps and pending tests by its current run against the reference's."""
    reference = current_run(world, world.reference)
    found: dict[int, BackendGaps] = {}
    if reference is None:
        return found
    ref, first = outcomes(reference), since(world)
    for backend in sorted({r.backend for r in world.runs} - {world.reference}):
        run = current_run(world, backend)
        if run is None:
            continue
        mine = outcomes(run)
        gaps, pending = {}, set()
        for test, (outcome, _reason) in ref.items():
            if outcome != PASSED:
                continue
            have = mine.get(test)
            state = gap(
                have[0] if have else None,
                absent=run.manifest.get(world.tests[test][1]),
                pending=have is None and first[test] > run.started_at,
            )
            if state == "pending":
                pending.add(test)
            elif state is not None:
                gaps[test] = (state, have[1] if have else None)
        # Tests only the backend ran, unless the reference ran them when its run started.
        then = current_run(world, world.reference, at=run.started_at)
        had_then = set(outcomes(then)) if then and run.started_at < reference.started_at else set()
        for test, (_outcome, reason) in mine.items():
            if test not in ref and test not in had_then:
                gaps[test] = ("reference_missing", reason)
        found[backend] = BackendGaps(gaps=gaps, pending=pending)
    return found


# --- The verdict of a run -------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    baseline: int | None
    opened: dict[int, str]  # test -> state
    closed: set[int]


def verdict(world: World, run: Run) -> Verdict:
    """The gaps ``run`` opens and closes against its backend's current run before it, the
    reference's current outcomes now the reference (its baseline, for the reference's own)."""
    earlier = [
        r
        for r in world.runs
        if r.backend == run.backend
        and r.id != run.id
        and r.complete
        and may_be_current(r, world.default_branch)
        and (r.started_at, r.id) < (run.started_at, run.id)
    ]
    baseline = max(earlier, key=lambda r: (r.started_at, r.id), default=None)
    x = outcomes(run)
    p = outcomes(baseline) if baseline else {}
    if run.backend == world.reference:
        compared = {t: None for t, (o, _r) in p.items() if o == PASSED}
    else:
        reference = current_run(world, world.reference)
        first = since(world)
        ref = outcomes(reference) if reference else {}
        compared = {t: first[t] for t, (o, _r) in ref.items() if o == PASSED}
    opened, closed = {}, set()
    for test, first_ran in compared.items():
        xo, po = x.get(test), p.get(test)
        state = gap(
            xo[0] if xo else None,
            absent=run.manifest.get(world.tests[test][1]),
            pending=first_ran is not None and first_ran > run.started_at,
        )
        was = gap(
            po[0] if po else None,
            pending=baseline is not None
            and first_ran is not None
            and first_ran > baseline.started_at,
        )
        # An absent test of an incomplete run may still come: no gap, not known fixed.
        known = xo is not None or run.complete
        is_gx = state not in (None, "pending") and known
        is_gp = baseline is not None and was not in (None, "pending")
        if is_gx and not is_gp:
            opened[test] = state
        if is_gp and not is_gx and known:
            closed.add(test)
    return Verdict(baseline=baseline.id if baseline else None, opened=opened, closed=closed)


# --- The aligned view -----------------------------------------------------------------------------


def aligned_pairs(world: World) -> dict[int, tuple[Run, Run]]:
    """Backend -> (its run, the reference's) at the newest commit both ran (by the later of the
    two starts), each the latest complete current-able run of that commit with results kept."""
    latest: dict[tuple[int, str], Run] = {}
    for r in world.runs:
        if r.complete and may_be_current(r, world.default_branch) and not r.results_expired:
            old = latest.get((r.backend, r.commit))
            if old is None or (r.started_at, r.id) > (old.started_at, old.id):
                latest[(r.backend, r.commit)] = r
    pairs = {}
    for (backend, commit), run in latest.items():
        reference = latest.get((world.reference, commit))
        if backend == world.reference or reference is None:
            continue
        rank = (max(run.started_at, reference.started_at), run.id)
        old = pairs.get(backend)
        if old is None or rank > (max(old[0].started_at, old[1].started_at), old[0].id):
            pairs[backend] = (run, reference)
    return pairs


def aligned_gaps(world: World) -> dict[int, dict[int, tuple[str, int | None]]]:
    """Backend -> test -> (state, reason) at its aligned commit; no test is pending there."""
    found = {}
    for backend, (run, reference) in aligned_pairs(world).items():
        mine, ref = outcomes(run), outcomes(reference)
        gaps = {}
        for test, (outcome, _reason) in ref.items():
            have = mine.get(test)
            state = (
                gap(have[0] if have else None, absent=run.manifest.get(world.tests[test][1]))
                if outcome == PASSED
                else None
            )
            if state is not None:
                gaps[test] = (state, have[1] if have else None)
        for test, (_outcome, reason) in mine.items():
            if test not in ref:
                gaps[test] = ("reference_missing", reason)
        found[backend] = gaps
    return found


# --- The triage that applies ----------------------------------------------------------------------


def backend_attributes(world: World, backend: int) -> dict:
    """What conditions are held to on a backend: its own attributes and its current run's."""
    run = current_run(world, backend)
    return {
        **world.attributes.get(backend, {}),
        **(world.run_attributes.get(run.id, {}) if run else {}),
    }


def run_attributes(world: World, run: Run) -> dict:
    """What a run's verdict holds conditions to: the attributes its CI sent over its backend's,
    or, none sent, its backend's current ones."""
    sent = world.run_attributes.get(run.id)
    if sent:
        return {**world.attributes.get(run.backend, {}), **sent}
    return backend_attributes(world, run.backend)


def triage_pick(
    world: World,
    *,
    backend: int,
    test: int,
    reason: int | None,
    today: datetime.date,
    attributes: dict | None = None,
    triages: tuple[Triage, ...] | None = None,
) -> Triage | None:
    """The one unexpired triage that applies to a gap: one naming its test, its reason or a
    pattern its key matches, on every backend or on its own (or its family), whose condition
    (if any) holds for the backend's attributes; a declaration that the test is not
    applicable first, then intended, then the most specific (a test, a pattern, a reason;
    named backends over all), then the newest."""
    key = world.tests[test][0]
    if attributes is None:
        attributes = backend_attributes(world, backend)
    applies = [
        t
        for t in (world.triages if triages is None else triages)
        if (
            t.test == test
            or (t.reason is not None and t.reason == reason)
            or (t.match_regex and key_matches(t.match_regex, key))
        )
        and (not t.backends or backend in t.backends or world.family.get(backend) in t.backends)
        and (t.expires_on is None or t.expires_on >= today)
        and (not t.condition or condition_applies(t.condition, attributes))
    ]
    return max(
        applies,
        key=lambda t: (
            t.kind == "not_applicable",
            t.kind == "intended",
            t.test is not None,
            bool(t.match_regex),
            bool(t.backends),
            t.created_at,
            t.id,
        ),
        default=None,
    )


# --- Where each test stands on each backend -------------------------------------------------------

INFRA = ("crashed", "timed_out", "empty", "not_run", "truncated")
_OUTCOME_LABEL = {PASSED: "passed", SKIPPED: "skipped", FAILED: "failed", ERROR: "error"}


# --- States from history (docs/history-states.md), with the default rules -----------------------

WINDOW_RUNS, WINDOW_DAYS = 100, 14
INFRA_SHARE = 0.8  # a run where more than this share of its tests failed: left out
MIN_FLIPS, FLIP_RATE, BREAK, EXIT_GREEN = 2, 0.01, 3, 30


def _history_runs(world: World, backend: int) -> list[Run]:
    """The backend's runs that were its current run, oldest first, in the window that ends
    with its current run: its newest ``WINDOW_RUNS`` of the last ``WINDOW_DAYS`` days."""
    current = current_run(world, backend)
    if current is None:
        return []
    runs = sorted(
        (
            r
            for r in world.runs
            if r.backend == backend and r.complete and may_be_current(r, world.default_branch)
        ),
        key=lambda r: (r.started_at, r.id),
    )
    cutoff = current.started_at - datetime.timedelta(days=WINDOW_DAYS)
    return [r for r in runs if r.started_at >= cutoff][-WINDOW_RUNS:]


def _nearly_all_failed(run: Run) -> bool:
    held = outcomes(run).values()
    failed = sum(o in (FAILED, ERROR) for o, _r in held)
    return bool(held) and failed > len(held) * INFRA_SHARE


def _flips(seq: str) -> int:
    """Changes between neighbours, where neither neighbour is in a run of ``BREAK`` or more
    failures (a break, TestGrid's)."""
    broken = set()
    for start in range(len(seq)):
        if seq[start : start + BREAK] == "F" * BREAK:
            end = start
            while end < len(seq) and seq[end] == "F":
                broken.add(end)
                end += 1
            back = start
            while back >= 0 and seq[back] == "F":
                broken.add(back)
                back -= 1
    return sum(
        1
        for i in range(1, len(seq))
        if seq[i] != seq[i - 1] and i not in broken and i - 1 not in broken
    )


def _wilson(failures: int, runs: int) -> float:
    """The lower bound of the 95 % Wilson score interval of ``failures`` in ``runs``."""
    if runs <= 0:
        return 0.0
    z, p = 1.96, failures / runs
    centre = p + z * z / (2 * runs)
    spread = z * ((p * (1 - p) / runs + z * z / (4 * runs * runs)) ** 0.5)
    return max(0.0, (centre - spread) / (1 + z * z / runs))


def history_states(world: World) -> dict[tuple[int, int], str]:
    """(backend, test) -> its state from history over the backend's window: its outcomes
    (passed, failed or error; a skip or an absence is no evidence) in the window's runs but
    those nearly all red, from the test's first failure there, after as many passes as the
    window held runs before that failure (the test is followed from its first failure, passing
    before it). **broken** when its newest ``BREAK`` or more of them all failed (it wins over
    flaky); **flaky** when they flip ``MIN_FLIPS`` times and at ``FLIP_RATE`` or more, unless
    they end in ``EXIT_GREEN`` passes. (Both outcomes at one commit, the other rule, needs a
    history that runs a commit twice; these do not.) Pairs in neither state are left out."""
    return {pair: state for pair, (state, _rank) in _judged(world).items()}


def flaky(world: World) -> set[tuple[int, int]]:
    """(backend, test) pairs flaky over the backend's window (``history_states``)."""
    return set(_flaky_ranked(world))


def _flaky_ranked(world: World) -> dict[tuple[int, int], float]:
    """``flaky``'s pairs, each with the Wilson lower bound of its window's failure rate (its
    failures over its runs, the passes before its first failure counted)."""
    return {pair: rank for pair, (state, rank) in _judged(world).items() if state == "flaky"}


def _judged(world: World) -> dict[tuple[int, int], tuple[str, float]]:
    """``history_states``' pairs, each with its state and (flaky) its rank."""
    found: dict[tuple[int, int], tuple[str, float]] = {}
    if not world.history_states:
        return found
    for backend in {r.backend for r in world.runs}:
        runs = _history_runs(world, backend)
        for test in world.tests:
            seq, before = "", None
            for index, run in enumerate(runs):
                if _nearly_all_failed(run):
                    continue
                outcome = outcomes(run).get(test, (None, None))[0]
                if outcome in (FAILED, ERROR):
                    before = index if before is None else before
                    seq += "F"
                elif outcome == PASSED and before is not None:
                    seq += "P"
            if before is None:
                continue
            full = "P" * before + seq
            newest = full[-BREAK:]
            if len(newest) == BREAK and set(newest) == {"F"}:
                found[backend, test] = ("broken", 0.0)
                continue
            flips = _flips(full)
            green = len(full) - len(full.rstrip("P"))
            rate_met = flips >= MIN_FLIPS and flips >= FLIP_RATE * max(len(full) - 1, 1)
            if rate_met and green < EXIT_GREEN:
                found[backend, test] = ("flaky", _wilson(seq.count("F"), len(full)))
    return found


def held(world: World) -> dict[tuple[int, int], tuple[str, int | None]]:
    """The gaps held open (docs/history-states.md, "held"): (backend, test) -> (state, reason).
    A gap its test's failure (or error) opened is not closed when the test passes on the backend
    and on the reference while the test is flaky on the backend: it stays open, with the state
    and reason of its last failure, until the test leaves flaky (then it closes, or, failing,
    is a plain gap). Replayed run by run, in the order the runs completed (their ids), each
    that became its backend's current run moving that backend's gaps (every backend's, the
    reference's), as the world stood then."""
    if not world.history_states:
        return {}
    open_gaps: dict[tuple[int, int], tuple[str, int | None]] = {}
    kept: set[tuple[int, int]] = set()
    for run, then in _replayed(world):
        moved = (
            {r.backend for r in then.runs} - {world.reference}
            if run.backend == world.reference
            else {run.backend}
        )
        gaps, flaky_then = _run_gaps(then), flaky(then)
        reference = current_run(then, world.reference)
        ref = outcomes(reference) if reference else {}
        for backend in moved:
            mine_run = current_run(then, backend)
            mine = outcomes(mine_run) if mine_run else {}
            now = gaps.get(backend, BackendGaps({}, set())).gaps
            for key in [k for k in open_gaps if k[0] == backend]:
                test = key[1]
                state = open_gaps[key][0]
                if test in now:
                    continue
                holds = (
                    state in ("failed", "error")
                    and key in flaky_then
                    and mine.get(test, (None,))[0] == PASSED
                    and ref.get(test, (None,))[0] == PASSED
                )
                if not holds:
                    del open_gaps[key]
                    kept.discard(key)
                else:
                    kept.add(key)
            for test, gap_now in now.items():
                open_gaps[(backend, test)] = gap_now
                kept.discard((backend, test))
    return {key: open_gaps[key] for key in kept}


def _replayed(world: World):
    """Each complete run, in the order the runs completed (their ids), that became its
    backend's current run, with the world as it stood then (its runs and the reference's)."""
    for run in sorted((r for r in world.runs if r.complete), key=lambda r: r.id):
        then = replace(
            world,
            runs=tuple(r for r in world.runs if r.id <= run.id),
            reference_history=tuple(i for i in world.reference_history if i <= run.id),
        )
        current = current_run(then, run.backend)
        if current is not None and current.id == run.id:
            yield run, then


def flaky_moves(world: World) -> dict[int, tuple[dict[int, float], set[int]]]:
    """Run -> (the tests it moved into flaky on its backend, each with its rank then; the tests
    it moved out of flaky): the runs that became their backend's current run, in order, each
    judging its backend's windows again. A run nearly all red is in no window: it moves none."""
    moves = {}
    before: dict[int, set[int]] = {}
    for run, then in _replayed(world):
        if _nearly_all_failed(run):
            continue
        ranked = {t: r for (b, t), r in _flaky_ranked(then).items() if b == run.backend}
        was = before.get(run.backend, set())
        entered = {t: r for t, r in ranked.items() if t not in was}
        left = was - set(ranked)
        if entered or left:
            moves[run.id] = (entered, left)
        before[run.backend] = set(ranked)
    return moves


@dataclass(frozen=True)
class Standing:
    """``parity.definitions.Standing``, read slowly: outcome, triage, cause."""

    outcome: str
    triage: str = ""
    cause: str = ""


def standings(world: World, *, today: datetime.date) -> dict[int, dict[int, Standing]]:
    """Backend -> test -> where it stands, for each backend with a current run but the
    reference, and each test its current run has, that is a gap or pending there: a declaration
    that it does not apply first (whatever the run did), then a file infrastructure lost (no
    triage: run health), then the gap with its triage (an issue of its reason is not modelled:
    the histories' reasons cite none). A test with neither a gap nor pending stands as its
    outcome in the current run. A gap with no triage whose test is flaky on the backend
    (``flaky``) stands as flaky, not untracked."""
    found: dict[int, dict[int, Standing]] = {}
    flaky_here = flaky(world)
    for backend, backend_gaps in engine_gaps(world).items():
        run = current_run(world, backend)
        mine = outcomes(run)
        here: dict[int, Standing] = {t: Standing(_OUTCOME_LABEL[o]) for t, (o, _r) in mine.items()}
        for test in backend_gaps.pending:
            here[test] = Standing("pending")
        for test, (state, reason) in backend_gaps.gaps.items():
            triage = triage_pick(world, backend=backend, test=test, reason=reason, today=today)
            if triage is not None and triage.kind == "not_applicable":
                here[test] = Standing("not_applicable")
            elif state in INFRA:
                here[test] = Standing("lost", cause=state)
            elif state == "reference_missing":
                here[test] = Standing(state)
            elif triage is None:
                here[test] = Standing(
                    state, "flaky" if (backend, test) in flaky_here else "untracked"
                )
            else:
                kind = "intended" if triage.kind == "intended" else "tracked"
                here[test] = Standing(state, kind)
        found[backend] = here
    return found


def uncovered(world: World, run: Run, *, today: datetime.date) -> dict[int, str]:
    """The gaps of ``run`` (a backend's, not the reference's) that were gaps of its baseline
    too, of the backend's own (not lost to infrastructure), that a triage covered for the
    baseline (its attributes, on its day, a triage removed since it started counted) and none
    covers now (the run's attributes, today): test -> why, "removed" (the triage that covered
    it then was removed since), "expired" (it expired since) or "lapsed" (its condition)."""
    earlier = [
        r
        for r in world.runs
        if r.backend == run.backend
        and r.id != run.id
        and r.complete
        and may_be_current(r, world.default_branch)
        and (r.started_at, r.id) < (run.started_at, run.id)
    ]
    baseline = max(earlier, key=lambda r: (r.started_at, r.id), default=None)
    reference = current_run(world, world.reference)
    if baseline is None or reference is None:
        return {}
    x, p, first = outcomes(run), outcomes(baseline), since(world)
    now_attrs, then_attrs = run_attributes(world, run), run_attributes(world, baseline)
    removed = tuple(t for t, at in world.removed if at > baseline.started_at)
    then_triages = world.triages + removed
    found = {}
    for test, (outcome, _r) in outcomes(reference).items():
        if outcome != PASSED:
            continue
        xo, po = x.get(test), p.get(test)
        state = gap(
            xo[0] if xo else None,
            absent=run.manifest.get(world.tests[test][1]),
            pending=first[test] > run.started_at,
        )
        was = gap(po[0] if po else None, pending=first[test] > baseline.started_at)
        known = xo is not None or run.complete
        if state in (None, "pending") or not known or was in (None, "pending") or state in INFRA:
            continue
        reason = xo[1] if xo else None
        pick = {"backend": run.backend, "test": test, "reason": reason}
        now = triage_pick(world, **pick, today=today, attributes=now_attrs)
        # As the verdict says why: a triage of today's that covered it then, else a removed one.
        then = triage_pick(
            world, **pick, today=baseline.started_at.date(), attributes=then_attrs
        ) or triage_pick(
            world, **pick, today=baseline.started_at.date(), attributes=then_attrs,
            triages=then_triages,
        )  # fmt: skip
        if then is None or now is not None:
            continue
        if then in removed and then not in world.triages:
            found[test] = "removed"
        elif (
            then.expires_on is not None
            and then.expires_on < today
            and (not then.condition or condition_applies(then.condition, now_attrs))
        ):
            found[test] = "expired"
        else:
            found[test] = "lapsed"
    # A test flaky on the backend reads flaky, not untracked: no exemption's end uncovers it.
    flaky_here = {test for backend, test in flaky(world) if backend == run.backend}
    return {test: why for test, why in found.items() if test not in flaky_here}


# --- A suite never run on a backend ------------------------------------------------------------

SUITE_WINDOW = datetime.timedelta(days=90)  # how far back a suite's runs count


def folded(
    world: World, *, now: datetime.datetime, today: datetime.date
) -> dict[int, dict[str, set[int]]]:
    """Backend -> suite -> the tests whose gap there a list shows as one row of the suite
    instead of one by one: a ``missing`` gap (a standing of outcome missing: not declared, not
    lost) of a test the reference's current run had in a suite, on a backend none of whose runs
    that may be current, started in the last 90 days, named that suite. A suite is a row when
    the map names it or a run of the window named it; with no map of names, a suite is the name
    CI sent on every backend. (Exclusions are not modelled: the oracle's map excludes none.)"""
    reference = current_run(world, world.reference)
    if reference is None:
        return {}
    window = [
        r
        for r in world.runs
        if may_be_current(r, world.default_branch) and r.started_at >= now - SUITE_WINDOW
    ]
    rows = set(world.mapped_suites) | {s for r in window for s in world.run_suites.get(r.id, ())}
    suite_of = world.test_suites.get(reference.id, {})
    found: dict[int, dict[str, set[int]]] = {}
    for backend, here in standings(world, today=today).items():
        ran = {s for r in window if r.backend == backend for s in world.run_suites.get(r.id, ())}
        for test, standing in here.items():
            suite = suite_of.get(test)
            if standing.outcome == "missing" and suite in rows and suite not in ran:
                found.setdefault(backend, {}).setdefault(suite, set()).add(test)
    return found


# --- A compare view (docs/compare-views.md) -------------------------------------------------------


def compare_counts(
    world: World, *, sample: int, basis: int, since: datetime.datetime
) -> dict[int, tuple[tuple[int, int], tuple[int, int]]]:
    """test -> ((passed, failed) on the sample, (passed, failed) on the basis): each complete
    run that may be current, its results kept, started since ``since``, counts once per test by
    its outcome in that run; a failure or an error fails, a skip counts for neither. Tests with
    no pass or failure on either side are left out."""
    counts: dict[int, list[int]] = {}
    for run in world.runs:
        if run.backend not in (sample, basis) or not run.complete or run.results_expired:
            continue
        if not may_be_current(run, world.default_branch) or run.started_at < since:
            continue
        side = 0 if run.backend == sample else 2
        for test, (outcome, _reason) in outcomes(run).items():
            if outcome == SKIPPED:
                continue
            row = counts.setdefault(test, [0, 0, 0, 0])
            row[side + (0 if outcome == PASSED else 1)] += 1
    return {t: ((sp, sf), (bp, bf)) for t, (sp, sf, bp, bf) in counts.items()}
