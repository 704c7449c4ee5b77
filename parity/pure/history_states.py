"""A test's state on a backend from its history over a window of runs (issue 46, item 1), not
from one run: flaky, broken, or neither (the current run decides, as before).

The rules, with their sources (docs/history-states.md):

- **Flaky** (TestGrid): the outcome flips between consecutive runs at a rate over a threshold
  (``HistoryRules.flip_rate``, with at least ``min_flips`` flips: LUCI's "at least two flaky
  verdicts"), where a run of ``break_length`` or more consecutive failures is a break, not
  flips: its failures and the changes into and out of it count as none.
- **Flaky** too (LUCI's source verdicts, Develocity): both outcomes at one commit, two runs of
  it each in its own process (a rerun inside one report is not a run here).
- **Broken** (TestGrid, Trunk): failing steadily since a changepoint, the newest
  ``break_length`` or more runs all failed. A break wins over flakiness: it is a gap to fix.
- **Leaving flaky** (PyTorch's re-enable rule): ``exit_green`` consecutive passing runs with
  no failure among them, or the failures aging out of the window (the recovery window).
- Runs where nearly every test failed (``infra_fail_fraction``; Trunk ignores uploads over 80 %
  failing, TestGrid skips all-red columns) are infrastructure: no test's window takes them.

Pure: plain data in, plain data out; the engine feeds it (``parity.engine.history``).
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

PASS, FAIL = "P", "F"  # an entry's outcome; skips and absences are no evidence and not entered
FLAKY, BROKEN = "flaky", "broken"
NONE = ""  # neither: the current run decides (passing, or a fresh failure)


@dataclass(frozen=True)
class HistoryRules:
    """The rules' settings (a project's, ``Project.history_rules``; these are the defaults).
    The window is the newest ``window_runs`` runs no older than ``window_days`` days."""

    # Off by default: at a run or two a day the one-run view is the evidence there is, and the
    # windows would cost every recompute for nothing; a project at many runs a day turns it on.
    enabled: bool = False
    window_runs: int = 100
    window_days: int = 14
    flip_rate: float = 0.01
    min_flips: int = 2
    break_length: int = 3
    exit_green: int = 30
    infra_fail_fraction: float = 0.8

    @classmethod
    def of(cls, values: dict | None) -> "HistoryRules":
        """The rules from a project's settings (unknown keys ignored, missing ones default)."""
        known = {k: v for k, v in (values or {}).items() if k in cls.__dataclass_fields__}
        return cls(**known)


# The range each rule may take (inclusive), checked by ``history_rules_problems`` (the settings
# page's form and the service that saves them): outside it a rule judges nothing sensible (a
# window of one run has no flips, a break of one failure makes every failure a break, a fraction
# of runs under a half would call ordinary red runs infrastructure's).
RULE_RANGES: dict[str, tuple[float, float]] = {
    "window_runs": (2, 1000),
    "window_days": (1, 365),
    "flip_rate": (0.0, 1.0),
    "min_flips": (1, 1000),
    "break_length": (2, 100),
    "exit_green": (1, 1000),
    "infra_fail_fraction": (0.5, 1.0),
}


def history_rules_problems(rules: HistoryRules) -> dict[str, str]:
    """What is wrong with ``rules``, by rule (empty: they may be saved)."""
    problems = {}
    for name, (low, high) in RULE_RANGES.items():
        value = getattr(rules, name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            problems[name] = f"{name} must be a number, not {value!r}."
        elif not low <= value <= high:
            problems[name] = f"{name} must be between {low:g} and {high:g}, not {value:g}."
    if problems:
        return problems
    if rules.break_length > rules.window_runs:
        problems["break_length"] = (
            f"A break of {rules.break_length} failures cannot fit a window of "
            f"{rules.window_runs} runs."
        )
    if rules.min_flips >= rules.window_runs:
        problems["min_flips"] = (
            f"{rules.window_runs} runs hold at most {rules.window_runs - 1} flips, "
            f"fewer than {rules.min_flips}."
        )
    return problems


@dataclass(frozen=True)
class Judged:
    """A window judged: its ``state``, how many ``runs`` (entries and leading passes) it holds,
    its ``failures`` and ``flips`` (breaks excluded), and the Wilson lower bound of its failure
    rate (``rank``: how sure we are it fails that often, to rank by)."""

    state: str
    runs: int
    failures: int
    flips: int
    rank: float


def run_is_infra(*, failed: int, total: int, rules: HistoryRules) -> bool:
    """A run where nearly every test it holds (``total``, skips included) failed is
    infrastructure's, in no test's window."""
    return total > 0 and failed > total * rules.infra_fail_fraction


def flips_count(outcomes: str, *, break_length: int) -> int:
    """Changes of outcome between consecutive entries of ``outcomes`` (oldest first, ``P`` and
    ``F``), where a run of ``break_length`` or more failures counts as none: neither its own
    entries nor the changes into and out of it are flips."""
    in_break = [False] * len(outcomes)
    start = 0
    while start < len(outcomes):
        end = start
        while end < len(outcomes) and outcomes[end] == outcomes[start]:
            end += 1
        if outcomes[start] == FAIL and end - start >= break_length:
            in_break[start:end] = [True] * (end - start)
        start = end
    return sum(
        1
        for i in range(1, len(outcomes))
        if outcomes[i] != outcomes[i - 1] and not in_break[i] and not in_break[i - 1]
    )


def _trailing(outcomes: str, outcome: str) -> int:
    return len(outcomes) - len(outcomes.rstrip(outcome))


def same_commit_flip(commits: Sequence[str], outcomes: str) -> bool:
    """Both outcomes at one commit: two runs of it, one passed and one failed."""
    seen: dict[str, set[str]] = {}
    for commit, outcome in zip(commits, outcomes, strict=True):
        seen.setdefault(commit, set()).add(outcome)
    return any(len(both) == 2 for both in seen.values())


def history_judge(
    outcomes: str,
    *,
    commits: Sequence[str] = (),
    same_commit: bool = False,
    leading_passes: int = 0,
    rules: HistoryRules,
) -> Judged:
    """The state of a test's window: ``outcomes`` oldest first, ``commits`` beside them (empty:
    not known; ``same_commit``: already known to hold both outcomes at one commit), after
    ``leading_passes`` passing runs the window holds before its first entry (a test the engine
    began to follow at its first failure had passed the runs before)."""
    full = PASS * leading_passes + outcomes
    failures = outcomes.count(FAIL)
    flips = flips_count(full, break_length=rules.break_length)
    runs = len(full)
    rank = wilson_lower(failures, runs)
    if _trailing(full, FAIL) >= rules.break_length:
        return Judged(BROKEN, runs, failures, flips, rank)
    flaky = (
        (flips >= rules.min_flips and flips >= rules.flip_rate * max(runs - 1, 1))
        or same_commit
        or (bool(commits) and same_commit_flip(commits, outcomes))
    )
    if flaky and _trailing(full, PASS) < rules.exit_green:
        return Judged(FLAKY, runs, failures, flips, rank)
    return Judged(NONE, runs, failures, flips, rank)


def wilson_lower(successes: int, trials: int, z: float = 1.96) -> float:
    """The lower bound of the Wilson score interval of a rate (at 95 % by default): a rate seen
    over few runs ranks below the same rate seen over many."""
    if trials <= 0:
        return 0.0
    p = successes / trials
    centre = p + z * z / (2 * trials)
    spread = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    return max(0.0, (centre - spread) / (1 + z * z / trials))


def window_judge(
    outcomes: str,
    *,
    keep: int,
    passes_before: int,
    earlier: int,
    same_commit: bool,
    rules: HistoryRules,
) -> tuple[str, int, Judged]:
    """A stored window judged again: ``outcomes`` (oldest first) cut to the newest ``keep``
    entries (those within the rules' runs and days), after ``passes_before`` passes the window
    held before its first entry, ``earlier`` the backend's runs in the window before its
    newest. Returns the window kept, the passes before it, and the judgement."""
    window = outcomes[len(outcomes) - keep :]
    # The passes before the first entry are older than it: gone once an entry is, and never
    # more than the runs still in the window.
    leading = 0 if keep < len(outcomes) else passes_before
    leading = max(0, min(leading, earlier + 1 - keep, rules.window_runs - keep))
    found = history_judge(window, same_commit=same_commit, leading_passes=leading, rules=rules)
    return window, leading, found
