"""The parity score (``parity.pure.scores``): by default intended gaps are no failures."""

from parity.pure.scores import Counts, counted_gaps, scores


def test_the_headline_leaves_intended_gaps_out_and_the_raw_score_counts_them():
    # 47 of the 100 tests the reference passes pass; 53 are intended gaps.
    found = scores(Counts(passing=47, compared=100, intended=53))
    assert (found.headline, found.raw, found.differs) == (1.0, 0.47, True)
    # 40 pass, 53 intended, 7 failing: 40 of the 47 meant to run.
    assert scores(Counts(passing=40, compared=100, intended=53)).headline == 40 / 47


def test_nothing_to_compare_is_no_score_and_no_intended_gap_changes_nothing():
    assert scores(Counts(passing=0, compared=53, intended=53)).headline is None  # all by design
    assert scores(Counts(passing=0, compared=0, intended=0)).raw is None
    plain = scores(Counts(passing=3, compared=4, intended=0))
    assert plain.headline == plain.raw == 0.75 and not plain.differs


def test_only_the_other_gaps_count_against_a_backend():
    assert counted_gaps(gaps=60, intended=53) == 7
