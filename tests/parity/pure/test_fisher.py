"""Fisher's exact test (one-sided, 2x2) against scipy's, and a compare view's rules
(``parity.pure.compare``) on tables whose answer is known."""

import math
import random

import pytest
from scipy.stats import fisher_exact

from parity.pure.compare import CompareRules, CompareState, Counts, judge, sentence
from parity.pure.fisher import fisher_greater, fisher_less


def _tables():
    rng = random.Random(46)
    fixed = [(0, 0, 0, 0), (8, 2, 1, 5), (3, 197, 56, 142), (60, 138, 6, 206), (0, 10, 0, 10)]
    drawn = [
        tuple(rng.randint(0, n) for _ in range(4)) for n in (5, 30, 300, 3000) for _ in range(50)
    ]
    return fixed + drawn


@pytest.mark.parametrize("table", _tables())
def test_fisher_equals_scipy(table):
    a, b, c, d = table
    for ours, side in ((fisher_greater, "greater"), (fisher_less, "less")):
        theirs = fisher_exact([[a, b], [c, d]], alternative=side)[1]
        assert math.isclose(ours(a, b, c, d), theirs, rel_tol=1e-9, abs_tol=1e-300), (table, side)


def test_fisher_by_hand():
    # [[3, 0], [0, 3]]: the one table of 20 with a = 3 given the margins.
    assert fisher_greater(3, 0, 0, 3) == pytest.approx(1 / 20)
    assert fisher_less(0, 3, 3, 0) == pytest.approx(1 / 20)
    with pytest.raises(ValueError):
        fisher_greater(-1, 0, 0, 0)


RULES = CompareRules()


@pytest.mark.parametrize(
    ("sample", "basis", "state"),
    [
        (Counts(0, 0), Counts(10, 0), CompareState.MISSING_SAMPLE),
        (Counts(10, 0), Counts(0, 0), CompareState.MISSING_BASIS),
        (Counts(0, 0), Counts(0, 0), CompareState.MISSING_SAMPLE),
        (Counts(19, 20), Counts(39, 0), CompareState.EXTREME),
        (Counts(34, 5), Counts(39, 0), CompareState.REGRESSED),
        (Counts(37, 2), Counts(39, 0), CompareState.NO_DIFFERENCE),  # under 3 failures
        (Counts(196, 4), Counts(200, 0), CompareState.NO_DIFFERENCE),  # 2 points: tolerated
        (Counts(35, 4), Counts(37, 2), CompareState.NO_DIFFERENCE),  # not significant
        (Counts(39, 0), Counts(24, 15), CompareState.IMPROVED),
    ],
)
def test_states(sample, basis, state):
    assert judge(sample=sample, basis=basis, rules=RULES).state == state


def test_a_stricter_confidence_clears_a_weak_regression():
    weak = judge(sample=Counts(34, 5), basis=Counts(39, 0), rules=RULES)
    assert 0.01 < weak.p < 0.05
    strict = judge(sample=Counts(34, 5), basis=Counts(39, 0), rules=CompareRules(confidence=99))
    assert strict.state == CompareState.NO_DIFFERENCE


def test_the_sentence_of_the_issue():
    sample, basis = Counts(141, 57), Counts(206, 6)
    j = judge(sample=sample, basis=basis, rules=RULES)
    text = sentence(sample_name="rocm-gfx90a", sample=sample, basis_name="cuda", basis=basis, p=j.p)

    assert j.state == CompareState.EXTREME
    assert text == "pass rate 97% on cuda (n=212) vs 71% on rocm-gfx90a (n=198); Fisher p < 0.001"
