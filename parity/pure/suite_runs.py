"""A suite's cell on one backend: its run status and the health of its last runs, from plain
data (docs/suites.md). The status says whether the suite runs at all, apart from its tests'
results: a suite whose tests all fail still *ran*; one whose job produced nothing *failed to
run*."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass

# The cell's statuses, the order a reader scans them in.
RAN = "ran"
FAILED_TO_RUN = "failed_to_run"
STALE = "stale"
PENDING = "pending"
NEVER_RAN = "never_ran"
EXCLUDED = "excluded"
STATUSES = (RAN, FAILED_TO_RUN, STALE, PENDING, NEVER_RAN, EXCLUDED)
STATUS_LABELS = {
    RAN: "ran",
    FAILED_TO_RUN: "failed to run",
    STALE: "stale",
    PENDING: "pending",
    NEVER_RAN: "never ran",
    EXCLUDED: "excluded",
}
HEALTH_RUNS = 5  # the last N runs a cell's health reads (PyTorch's relay promotes on its last 5)


@dataclass(frozen=True)
class SuiteRun:
    """One run of a suite on a backend: the uploads of one parity run that name the suite."""

    run_id: int
    started_at: datetime.datetime
    uploads: int
    failed_uploads: int  # ingest failed: the job's reports never became results
    pending_uploads: int  # queued or processing
    tests: int
    failed_tests: int  # failed or error
    timed_out_files: int
    # What the CI gate said of its files when it finished (``Verdict.ok`` scoped to them,
    # stored as ``SuiteRunGate``); None: not recorded (a run from before parity recorded it).
    gate_ok: bool | None = None

    @property
    def pending(self) -> bool:
        return self.pending_uploads > 0 and self.failed_uploads == 0

    @property
    def failed_to_run(self) -> bool:
        """Its job produced no results: an upload that failed, or uploads with no test."""
        return self.failed_uploads > 0 or (self.pending_uploads == 0 and self.tests == 0)

    @property
    def timed_out(self) -> bool:
        return self.timed_out_files > 0

    @property
    def green(self) -> bool:
        """The one rule of a suite run's green (docs/suites.md): it ran (it has results, no
        upload failed to ingest), no file timed out, and the CI gate passed for its files: it
        opened no untracked gap, uncovered none, and lost no coverage (``Verdict.ok``). A
        failing test that triage tracks keeps a run green, as it keeps CI green. A run whose
        gate parity did not record reads green when none of its tests failed."""
        if self.pending or self.failed_to_run or self.timed_out:
            return False
        return self.gate_ok if self.gate_ok is not None else not self.failed_tests


@dataclass(frozen=True)
class Health:
    """The last runs of a suite on a backend (at most ``HEALTH_RUNS``, newest first)."""

    runs: int
    greens: int
    timeouts: int
    consecutive_greens: int

    @property
    def pass_rate(self) -> float | None:
        """The share of its last runs that were green; None with no finished run."""
        return self.greens / self.runs if self.runs else None


# Tiers (issue 47): what a suite's result means on a backend. A blocking suite gates; an
# informing one reports; a broken one is red too often to say anything.
BLOCKING = "blocking"
INFORMING = "informing"
BROKEN = "broken"
TIERS = (BLOCKING, INFORMING, BROKEN)


@dataclass(frozen=True)
class TierRules:
    """When a suite moves between tiers, each a streak of its runs in a row since its last move:
    informing → blocking after ``promote_after`` greens; blocking or informing → broken after
    ``demote_after`` reds; broken → informing after ``recover_after`` greens. A move starts
    the count again, and each move needs a streak longer than one run, so a suite at a
    threshold does not flap: one green after a red does not undo a demotion."""

    promote_after: int = 5
    demote_after: int = 3
    recover_after: int = 3


@dataclass(frozen=True)
class TierState:
    """Where a suite stands on a backend: its tier and the streak since its last move."""

    tier: str = INFORMING
    greens: int = 0
    reds: int = 0


def tier_step(state: TierState, green: bool, rules: TierRules = TierRules()) -> TierState:
    """``state`` after one more finished run, green or red: the one place a tier moves (the
    stored summary applies each run as it finishes, a rebuild replays them all)."""
    greens, reds = (state.greens + 1, 0) if green else (0, state.reds + 1)
    tier = state.tier
    if tier != BROKEN and reds >= rules.demote_after:
        return TierState(BROKEN)
    if tier == INFORMING and greens >= rules.promote_after:
        return TierState(BLOCKING)
    if tier == BROKEN and greens >= rules.recover_after:
        return TierState(INFORMING)
    return TierState(tier, greens, reds)


# The names of a move, as the digest and the webhook say them.
PROMOTED = "promoted"  # informing -> blocking
DEMOTED = "demoted"  # -> broken
RECOVERED = "recovered"  # broken -> informing


def move_of(before: str, after: str) -> str | None:
    if before == after:
        return None
    if after == BLOCKING:
        return PROMOTED
    if after == BROKEN:
        return DEMOTED
    return RECOVERED


def tier_of(runs: Sequence[SuiteRun], rules: TierRules = TierRules()) -> str:
    """The tier ``runs`` (newest first) leave a suite in, replayed from its oldest run as
    informing. Pending runs have no outcome and move nothing."""
    state = TierState()
    for run in reversed(runs):
        if not run.pending:
            state = tier_step(state, run.green, rules)
    return state.tier


@dataclass(frozen=True)
class Cell:
    status: str
    last: SuiteRun | None
    health: Health
    reason: str = ""  # an exclusion's
    issue_url: str = ""
    tier: str = INFORMING

    @property
    def label(self) -> str:
        return STATUS_LABELS[self.status]


def health_of(runs: Sequence[SuiteRun], *, last: int = HEALTH_RUNS) -> Health:
    """The health of the newest ``last`` finished runs of ``runs`` (newest first); a pending
    run has no outcome yet and counts in none of them."""
    finished = [r for r in runs if not r.pending][:last]
    consecutive = 0
    for run in finished:
        if not run.green:
            break
        consecutive += 1
    return Health(
        runs=len(finished),
        greens=sum(r.green for r in finished),
        timeouts=sum(r.timed_out for r in finished),
        consecutive_greens=consecutive,
    )


def cell_of(
    runs: Sequence[SuiteRun],
    *,
    now: datetime.datetime,
    stale_after: datetime.timedelta,
    excluded: bool = False,
    reason: str = "",
    issue_url: str = "",
    rules: TierRules = TierRules(),
    tier: str | None = None,
) -> Cell:
    """A suite's cell on a backend from its runs there (newest first). Excluded wins (the map
    says the backend does not run it); then never ran; then stale: its newest run started
    longer ago than the suite's interval, whatever it was; then the newest run's own status.
    ``tier``: its stored tier (``SuiteSummary``, ``runs`` then its newest few); None: replayed
    from ``runs``, all of them."""
    health = health_of(runs)
    last = runs[0] if runs else None
    if excluded:
        status = EXCLUDED
    elif last is None:
        status = NEVER_RAN
    elif now - last.started_at > stale_after:
        status = STALE
    elif last.pending:
        status = PENDING
    elif last.failed_to_run:
        status = FAILED_TO_RUN
    else:
        status = RAN
    return Cell(
        status=status,
        last=last,
        health=health,
        reason=reason,
        issue_url=issue_url,
        tier=tier if tier is not None else tier_of(runs, rules),
    )
