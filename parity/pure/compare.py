"""A compare view's judgement of one test: its pass/fail counts on a sample variant against a
basis variant over the same days, and the state they put it in (docs/compare-views.md).

The rules are OpenShift Sippy's Component Readiness (its defaults: 95% confidence, a 5-point
tolerance, at least 3 failures, more than a 15-point drop is extreme): a test regressed only
when the sample's pass rate is below the basis's by more than the tolerance, the sample failed
at least ``min_failures`` times, and Fisher's exact test (one-sided) says the difference is not
chance at the set confidence. Counts are of runs: a test's outcome in a run (reruns and shards
combined as everywhere else), passed against failed or error; skips count for neither.
"""

import enum
from dataclasses import dataclass

from parity.pure.fisher import fisher_greater, fisher_less

EXTREME_DROP = 15.0  # pass-rate points: a significant drop larger than this is extreme


class CompareState(enum.StrEnum):
    """Worst first: the order a compare page lists its tests in."""

    EXTREME = "extreme"
    REGRESSED = "regressed"
    MISSING_SAMPLE = "missing_sample"
    MISSING_BASIS = "missing_basis"
    NO_DIFFERENCE = "no_difference"
    IMPROVED = "improved"

    @property
    def label(self) -> str:
        return _LABELS[self]

    @property
    def rank(self) -> int:
        return list(CompareState).index(self)


_LABELS = {
    CompareState.EXTREME: "extreme",
    CompareState.REGRESSED: "regressed",
    CompareState.MISSING_SAMPLE: "missing sample",
    CompareState.MISSING_BASIS: "missing basis",
    CompareState.NO_DIFFERENCE: "no significant difference",
    CompareState.IMPROVED: "improved",
}
RED = frozenset({CompareState.EXTREME, CompareState.REGRESSED})


@dataclass(frozen=True)
class CompareRules:
    confidence: float = 95.0  # percent
    tolerance: float = 5.0  # pass-rate points the sample may fall below the basis
    min_failures: int = 3  # of the sample, for a regression


@dataclass(frozen=True)
class Counts:
    passed: int
    failed: int

    @property
    def total(self) -> int:
        return self.passed + self.failed

    @property
    def rate(self) -> float | None:
        """Pass rate in percent; None without a run that passed or failed."""
        return 100.0 * self.passed / self.total if self.total else None


@dataclass(frozen=True)
class Judgement:
    state: CompareState
    p: float | None  # the one-sided Fisher p-value the state rests on; None when not tested
    drop: float | None  # basis rate minus sample rate, in points


def judge(*, sample: Counts, basis: Counts, rules: CompareRules) -> Judgement:
    """The state of one test on the sample against the basis, under ``rules``."""
    if not sample.total:
        return Judgement(CompareState.MISSING_SAMPLE, None, None)
    if not basis.total:
        return Judgement(CompareState.MISSING_BASIS, None, None)
    alpha = 1 - rules.confidence / 100
    drop = basis.rate - sample.rate
    table = (sample.failed, sample.passed, basis.failed, basis.passed)
    if drop > rules.tolerance and sample.failed >= rules.min_failures:
        p = fisher_greater(*table)
        if p < alpha:
            extreme = drop > EXTREME_DROP
            return Judgement(CompareState.EXTREME if extreme else CompareState.REGRESSED, p, drop)
        return Judgement(CompareState.NO_DIFFERENCE, p, drop)
    if drop < 0:
        p = fisher_less(*table)
        if p < alpha:
            return Judgement(CompareState.IMPROVED, p, drop)
        return Judgement(CompareState.NO_DIFFERENCE, p, drop)
    return Judgement(CompareState.NO_DIFFERENCE, None, drop)


@dataclass(frozen=True)
class JudgedRow:
    """One test of a report: its counts on both variants, its judgement and its sentence."""

    test_id: int
    test: str  # file::Class::name
    sample: Counts
    basis: Counts
    judgement: Judgement
    sentence: str

    @property
    def state(self) -> CompareState:
        return self.judgement.state


def rules_of_settings(confidence: float, tolerance: float, min_failures: int) -> CompareRules:
    return CompareRules(confidence=confidence, tolerance=tolerance, min_failures=min_failures)


def p_text(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def sentence(
    *, sample_name: str, sample: Counts, basis_name: str, basis: Counts, p: float | None
) -> str:
    """The sentence behind a cell: "pass rate 97% on cuda (n=212) vs 71% on rocm-gfx90a
    (n=198); Fisher p < 0.001" (the basis first)."""

    def side(name: str, counts: Counts) -> str:
        return f"{counts.rate:.0f}% on {name} (n={counts.total})"

    if sample.rate is None or basis.rate is None:
        missing, name, other = (
            (sample_name, basis_name, basis)
            if sample.rate is None
            else (basis_name, sample_name, sample)
        )
        text = f"no passed or failed run on {missing} in the window"
        return text if other.rate is None else f"{text}; pass rate {side(name, other)}"
    text = f"pass rate {side(basis_name, basis)} vs {side(sample_name, sample)}"
    return text if p is None else f"{text}; Fisher {p_text(p)}"
