"""Version transitions through uploads: a seeded history of rocm-gfx942 with one upgrade (ROCm
7.1 → 7.14) makes exactly one transition, whose counts and lists equal the kinds computed from
the uploaded outcomes (``tests/parity/transitions_scenario.py``), with the exemptions whose
condition stopped or started holding; runs of unchanged attributes make none."""

import pytest

from parity.models import Backend, Transition
from parity.pure.attributes import attributes_changed
from parity.result_reads import transition_detail
from tests.parity.transitions_scenario import (
    NEW,
    OLD,
    TESTS,
    expected,
    history,
    sender,
    upgrade_upload,
)


@pytest.fixture
def upgraded(xla, ingest, eager_errors_propagate):
    runs = history()
    return runs, upgrade_upload(xla, ingest, runs)


def _listed(transition: Transition, limit: int = 1000) -> dict[str, set[str]]:
    detail = transition_detail(transition=transition, limit=limit)
    return {lst.kind: {t.test for t in lst.tests} for lst in detail.lists}


def test_an_upgrade_makes_one_transition_whose_lists_match_the_uploads(upgraded):
    runs, uploaded = upgraded
    transition = Transition.objects.get()
    assert (transition.from_run_id, transition.to_run_id) == (
        uploaded["day2"].pk,
        uploaded["day3"].pk,
    )
    assert transition.backend.name == "rocm-gfx942"
    assert transition.changed == {"rocm": ["7.1", "7.14"]}
    truth = expected(runs["day2"], runs["day3"])
    assert all(truth.values()), "the seed makes every kind non-empty"
    assert transition.counts == {kind: len(tests) for kind, tests in truth.items()}
    assert _listed(transition) == truth


def test_the_lists_page_through_every_test_once(upgraded):
    runs, _ = upgraded
    transition = Transition.objects.get()
    truth = expected(runs["day2"], runs["day3"])
    seen: dict[str, list[str]] = {kind: [] for kind in truth}
    for page in range(1, 20):
        detail = transition_detail(
            transition=transition, offsets=dict.fromkeys(truth, (page - 1) * 4), limit=4
        )
        for lst in detail.lists:
            assert lst.total == len(truth[lst.kind])
            seen[lst.kind] += [t.test for t in lst.tests]
    assert {kind: sorted(tests) for kind, tests in seen.items()} == {
        kind: sorted(tests) for kind, tests in truth.items()
    }


def test_the_lapses_at_the_change_are_listed(upgraded):
    lapses = Transition.objects.get().lapses
    assert [(x["condition"], x["before"], x["after"]) for x in lapses] == [
        ("rocm < 7.14", True, False),
        ("rocm >= 7.14", False, True),
    ]
    assert [x["match"] for x in lapses] == [TESTS[0], TESTS[3]]


def test_no_transition_without_an_attribute_change(xla, ingest, eager_errors_propagate):
    send = sender(ingest)
    runs = history()
    Backend.objects.create(project=xla, name="rocm")
    send("cpu", dict.fromkeys(TESTS, "passed"), day="2026-05-01")
    send("rocm", runs["day1"], day="2026-05-01", attributes=OLD)
    # Other outcomes, other tests, the same attributes in another order: no transition.
    send("rocm", runs["day3"], day="2026-05-02", attributes=dict(reversed(OLD.items())))
    # Another branch's run at another version never becomes current.
    send("rocm", runs["day4"], day="2026-05-03", attributes=NEW, branch="pr")
    assert not Transition.objects.exists()


def test_a_late_shard_of_the_upgrade_is_counted(xla, ingest, eager_errors_propagate):
    send, runs = sender(ingest), history()
    Backend.objects.create(project=xla, name="rocm")
    send("cpu", dict.fromkeys(TESTS, "passed"), day="2026-05-01")
    send("rocm", runs["day2"], day="2026-05-02", attributes=OLD)
    upgrade = send("rocm", runs["day3"], day="2026-05-03", attributes=NEW)
    assert Transition.objects.get().new == len(expected(runs["day2"], runs["day3"])["new"])
    extra = {f"test/test_c.py::TestTC::test_{n}": "passed" for n in range(3)}
    send("rocm", extra, day="2026-05-03", attributes=NEW, run=upgrade.key)  # its late shard
    transition = Transition.objects.get()
    assert transition.to_run_id == upgrade.pk
    assert transition.new == len(expected(runs["day2"], {**runs["day3"], **extra})["new"])


def test_attributes_changed_names_each_key_that_moved():
    assert attributes_changed(OLD, dict(reversed(OLD.items()))) == {}
    assert attributes_changed(OLD, NEW) == {"rocm": ["7.1", "7.14"]}
    assert attributes_changed({"arch": "gfx942"}, {"arch": "gfx942", "torch": "2.9"}) == {
        "torch": [None, "2.9"]
    }
    assert attributes_changed({"rocm": "7.1"}, {}) == {"rocm": ["7.1", None]}
