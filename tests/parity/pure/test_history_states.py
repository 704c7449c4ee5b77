"""States from history (``parity.pure.history_states``): TestGrid's flips and breaks, both
outcomes at one commit, PyTorch's exit after green runs, the Wilson bound."""

import random

import pytest

from parity.pure.history_states import (
    BROKEN,
    FLAKY,
    NONE,
    HistoryRules,
    flips_count,
    history_judge,
    run_is_infra,
    wilson_lower,
)

RULES = HistoryRules()


def judge(outcomes: str, **kwargs) -> str:
    return history_judge(outcomes, rules=kwargs.pop("rules", RULES), **kwargs).state


def test_a_test_failing_now_and_then_is_flaky_and_one_failure_is_not():
    assert judge("PPPPFPPPPPFPPPP") == FLAKY  # four flips
    assert judge("PPPPPPPPPF") == NONE  # a fresh failure: a gap, as before
    assert judge("PPPPPPPPPP") == NONE


def test_three_failures_in_a_row_are_a_break_not_flips():
    assert flips_count("PPFFFPP", break_length=3) == 0
    assert flips_count("PPFFPP", break_length=3) == 2  # two failures: flips
    assert judge("PPPPPPPFFF") == BROKEN  # failing steadily since a changepoint
    assert judge("PPFFFPPPPP") == NONE  # a fixed break is no flakiness
    assert judge("PFPFPFFF") == BROKEN  # a break now wins over the flips before it


def test_both_outcomes_at_one_commit_is_flaky_without_any_flip_rate():
    lenient = HistoryRules(min_flips=99)
    assert judge("PF", commits=["c1", "c1"], rules=lenient) == FLAKY
    assert judge("PF", commits=["c1", "c2"], rules=lenient) == NONE


def test_the_flip_rate_is_over_the_whole_window_leading_passes_included():
    rules = HistoryRules(flip_rate=0.1)
    assert judge("FPFP", rules=rules) == FLAKY  # 3 flips in 4 runs
    assert judge("FPFP", leading_passes=60, rules=rules) == NONE  # 4 flips in 64 runs


def test_a_flaky_test_leaves_after_n_green_runs_with_no_red():
    rules = HistoryRules(exit_green=5)
    assert judge("PFPFPPPP", rules=rules) == FLAKY
    assert judge("PFPFPPPPP", rules=rules) == NONE


def test_a_run_where_nearly_every_test_failed_is_infrastructure():
    assert run_is_infra(failed=95, total=100, rules=RULES)
    assert not run_is_infra(failed=50, total=100, rules=RULES)
    assert not run_is_infra(failed=0, total=0, rules=RULES)


def test_settings_come_from_the_project_and_default_otherwise():
    assert HistoryRules.of({"exit_green": 7, "unknown": 1}) == HistoryRules(exit_green=7)
    assert HistoryRules.of(None) == RULES


def _wilson_by_formula(k: int, n: int, z: float = 1.96) -> float:
    # Wilson (1927), written as in Agresti & Coull (1998): (p + z²/2n - z√(p(1-p)/n + z²/4n²))
    # / (1 + z²/n).
    p = k / n
    return (p + z**2 / (2 * n) - z * ((p * (1 - p) + z**2 / (4 * n)) / n) ** 0.5) / (1 + z**2 / n)


@pytest.mark.parametrize("k,n", [(1, 10), (10, 100), (0, 5), (5, 5), (37, 212)])
def test_wilson_lower_bound_matches_the_formula_and_ranks_more_evidence_higher(k, n):
    assert wilson_lower(k, n) == pytest.approx(max(0.0, _wilson_by_formula(k, n)))
    assert wilson_lower(k * 10, n * 10) >= wilson_lower(k, n)


def test_wilson_of_nothing_is_zero():
    assert wilson_lower(0, 0) == 0.0


def test_flips_match_a_plain_count_with_breaks_masked():
    rng = random.Random(46)
    for _ in range(500):
        seq = "".join(rng.choice("PPF") for _ in range(rng.randint(0, 30)))
        masked = list(seq)
        i = 0
        while i < len(seq):  # mask each run of 3+ failures
            j = i
            while j < len(seq) and seq[j] == seq[i]:
                j += 1
            if seq[i] == "F" and j - i >= 3:
                masked[i:j] = ["B"] * (j - i)
            i = j
        expected = sum(
            1 for a, b in zip(masked, masked[1:], strict=False) if a != b and "B" not in (a, b)
        )
        assert flips_count(seq, break_length=3) == expected, seq
