"""A suite's cell from its runs (parity.pure.suite_runs): its status, its health, and its tier,
replayed over a seeded history by the rules as configured, with no flap at a threshold."""

import datetime

import pytest

from parity.pure.suite_runs import (
    BLOCKING,
    BROKEN,
    INFORMING,
    SuiteRun,
    TierRules,
    cell_of,
    health_of,
    tier_of,
)

NOW = datetime.datetime(2026, 6, 1, 12, tzinfo=datetime.UTC)
DAY = datetime.timedelta(days=1)


def history(marks: str) -> list[SuiteRun]:
    """Runs from a string, oldest first: G green, R red (a test failed), T timed out, F failed
    to run, P pending; answered newest first, a day apart, the last one now."""
    runs = []
    for age, mark in enumerate(reversed(marks)):
        runs.append(
            SuiteRun(
                run_id=len(marks) - age,
                started_at=NOW - age * DAY,
                uploads=1,
                failed_uploads=int(mark == "F"),
                pending_uploads=int(mark == "P"),
                tests=0 if mark in "FP" else 3,
                failed_tests=int(mark == "R"),
                timed_out_files=int(mark == "T"),
            )
        )
    return runs


def tiers_along(marks: str, rules: TierRules) -> str:
    """The tier after each run: its first letter (b, i, x for broken)."""
    letter = {BLOCKING: "b", INFORMING: "i", BROKEN: "x"}
    return "".join(letter[tier_of(history(marks[: n + 1]), rules)] for n in range(len(marks)))


RULES = TierRules(promote_after=3, demote_after=2, recover_after=2)


@pytest.mark.parametrize(
    ("marks", "along"),
    [
        # Three greens promote; one red does not demote a blocking suite, two do.
        ("GGGRGRR", "iibbbbx"),
        # Two greens make a broken suite informing; three more make it blocking.
        ("RRGGGGG", "ixxiiib"),
        # At every threshold, alternation never moves it: no flap.
        ("GRGRGRGR", "iiiiiiii"),
        ("GGRGGRGG", "iiiiiiii"),
        # A move starts the count again: the greens that promoted do not count twice.
        ("RRGGG", "ixxii"),
        # Pending runs move nothing; a timeout or a run that failed to run is red.
        ("GGPG", "iiib"),
        ("GGGTF", "iibbx"),
    ],
)
def test_tiers_follow_the_rules_as_configured(marks, along):
    assert tiers_along(marks, RULES) == along


def test_the_default_rules_are_pytorchs_relay_shape():
    assert tier_of(history("GGGG")) == INFORMING
    assert tier_of(history("GGGGG")) == BLOCKING  # the last 5 runs green
    assert tier_of(history("GGGGGRR")) == BLOCKING
    assert tier_of(history("GGGGGRRR")) == BROKEN


def test_health_reads_the_last_five_finished_runs():
    health = health_of(history("RRGGTGGP"))  # newest: P (skipped), G, G, T, G, G
    assert (health.runs, health.greens, health.timeouts) == (5, 4, 1)
    assert health.consecutive_greens == 2
    assert health.pass_rate == 0.8
    assert health_of([]).pass_rate is None


def test_a_cells_status_reads_its_newest_run_within_the_interval():
    stale_after = datetime.timedelta(hours=48)

    def status(runs, **kw):
        return cell_of(runs, now=NOW, stale_after=stale_after, **kw).status

    assert status(history("RG")) == "ran"
    assert status(history("GR")) == "ran"  # its tests failed: it still ran
    assert status(history("GF")) == "failed_to_run"
    assert status(history("GP")) == "pending"
    assert status([]) == "never_ran"
    assert status(history("G"), excluded=True) == "excluded"
    old = history("GG")
    assert cell_of(old, now=NOW + 3 * DAY, stale_after=stale_after).status == "stale"
