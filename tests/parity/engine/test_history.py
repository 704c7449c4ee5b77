"""States from history (issue 46, item 1), kept by the engine run by run
(``parity.engine.history``): a seeded history with known truth (tests flaky at set rates, a
break at a named commit, both outcomes at one commit, runs where every test failed) gives the
states the truth names; and at one run a day, a noisy test's untracked gap opens and closes
once, then reads flaky, where each failure used to open an untracked gap."""

import datetime
import hashlib

import pytest

from parity.definitions import gap_standing, untracked_q
from parity.engine import parity_recompute, project_recompute
from parity.models import Gap, GapEvent, Outcome, Run, Snapshot, TestHistory
from parity.result_reads.verdict import run_verdict
from parity.services.projects import project_create
from tests.parity.engine.rows import backend_of, results_upload

START = datetime.datetime(2026, 6, 1, tzinfo=datetime.UTC)
P, F = Outcome.PASSED, Outcome.FAILED
STEADY = [f"test/test_s.py::S::t{k}" for k in range(8)]
FLAKY_20 = "test/test_f.py::F::every_fifth"  # fails one run in five
FLAKY_10 = "test/test_f.py::F::every_tenth"  # one in ten
BREAK = "test/test_b.py::B::broken_at_c20"  # passes until commit c20, fails since
SAME_COMMIT = "test/test_c.py::C::both_at_c24"  # passes and fails at c24, passes elsewhere
ONE_OFF = "test/test_c.py::C::failed_once"  # one failure, no flakiness
ALL = [*STEADY, FLAKY_20, FLAKY_10, BREAK, SAME_COMMIT, ONE_OFF]
INFRA_RUNS = {10, 15}  # every test failed: left out


def _run(project, backend: str, n: int, at: datetime.datetime, commit: str) -> Run:
    return Run.objects.create(
        project=project,
        backend=backend_of(project, backend),
        key=f"{backend}-{n}",
        commit=hashlib.sha1(commit.encode()).hexdigest(),
        branch=project.default_branch,
        complete=True,
        started_at=at,
    )


def _truth_outcomes(n: int) -> dict[str, Outcome]:
    """Run ``n``'s outcomes on tpu, by the set rates and named commits."""
    if n in INFRA_RUNS:
        return dict.fromkeys(ALL, F)
    outcomes = dict.fromkeys(ALL, P)
    outcomes[FLAKY_20] = F if n % 5 == 2 else P
    outcomes[FLAKY_10] = F if n % 10 == 7 else P
    outcomes[BREAK] = F if n >= 20 else P
    outcomes[SAME_COMMIT] = F if n == 24 else P  # run 24 is a second run of c24 (run 23)
    outcomes[ONE_OFF] = F if n == 12 else P
    return outcomes


def _commit(n: int) -> str:
    return "c23" if n == 24 else f"c{n}"


TRUTH = {FLAKY_20: "flaky", FLAKY_10: "flaky", BREAK: "broken", SAME_COMMIT: "flaky"}


@pytest.mark.django_db
def test_a_seeded_history_gives_the_states_its_truth_names(project):
    # Two flips are not enough here, so the test failing once at a commit it also passed at
    # is flaky by that rule alone.
    project.history_rules = {"enabled": True, "min_flips": 3}
    project.save()
    cpu = _run(project, "cpu", 0, START, "c0")
    results_upload(cpu, dict.fromkeys(ALL, P))
    parity_recompute(run=cpu)
    for n in range(1, 31):  # many runs a day: every two hours
        run = _run(project, "tpu", n, START + datetime.timedelta(hours=2 * n), _commit(n))
        results_upload(run, _truth_outcomes(n))
        parity_recompute(run=run)

    rows = {h.test.key: h for h in TestHistory.objects.select_related("test")}
    states = {key: h.state for key, h in rows.items() if h.state}
    assert states == TRUTH
    # A steady test that failed only in the runs infrastructure lost is not even followed;
    # the test that failed once is followed (its failure is in the window) but in no state.
    assert not set(STEADY) & set(rows)
    assert rows[ONE_OFF].state == "" and rows[ONE_OFF].failures == 1
    # The break is followed from its first failure (run 20) to the end, 11 failures.
    assert rows[BREAK].outcomes == "F" * 11 and rows[BREAK].failures == 11
    # An infrastructure run is in no followed test's entries: every_fifth failed in runs 2,
    # 7, 12, 17, 22, 27 and not in the lost runs 10 and 15, between its entries.
    assert rows[FLAKY_20].outcomes == "FPPPPFPPPFPPPFPPPPFPPPPFPPP"
    # Ranked by the Wilson lower bound: more failures over as many runs rank higher.
    assert rows[BREAK].rank > rows[FLAKY_20].rank > rows[FLAKY_10].rank > 0
    # The open gap of a flaky test that failed in the current run (run 30: every_tenth
    # passes, every_fifth passes, the break fails) reads broken's as a plain gap.
    assert gap_standing(Gap.objects.get(test__key=BREAK, is_open=True)).untracked


NOISE_DAYS = {2, 5, 9, 12}  # the days a noisy test fails, at one run a day


@pytest.mark.django_db
def test_at_one_run_a_day_a_noisy_test_reads_flaky_once_instead_of_churning(project):
    noisy = "test/test_n.py::N::noisy"
    project.history_rules = {"enabled": True}
    project.save()
    cpu = _run(project, "cpu", 0, START, "c0")
    results_upload(cpu, {noisy: P, STEADY[0]: P})
    parity_recompute(run=cpu)
    open_daily, untracked_daily, flaky_daily, snapshot_untracked, gate = [], [], [], [], []
    for day in range(1, 15):
        run = _run(project, "tpu", day, START + datetime.timedelta(days=day), f"d{day}")
        results_upload(run, {noisy: F if day in NOISE_DAYS else P, STEADY[0]: P})
        parity_recompute(run=run)
        gaps = Gap.objects.filter(test__key=noisy, is_open=True)
        open_daily.append(gaps.exists())
        untracked_daily.append(gaps.filter(untracked_q()).exists())
        flaky_daily.append(TestHistory.objects.filter(test__key=noisy, state="flaky").exists())
        snapshot_untracked.append(
            Snapshot.objects.filter(run=run).values_list("untracked", flat=True).first()
        )
        verdict = run_verdict(run=run)
        gate.append((verdict.ok, verdict.opened["untracked"], verdict.opened["flaky"]))

    # One gap, opened on the test's first failure (one failure is no flakiness: untracked that
    # day), held open from the next day on while the test is flaky (it never leaves: 30 green
    # runs are not reached), where a gap used to open and close with each failure.
    assert open_daily == [day >= 2 for day in range(1, 15)]
    assert Gap.objects.filter(test__key=noisy).count() == 1
    assert _opened(untracked_daily) == 1
    assert flaky_daily == [day >= 3 for day in range(1, 15)]
    assert _opened(flaky_daily) == 1
    assert TestHistory.objects.get(test__key=noisy).since == START + datetime.timedelta(days=3)
    assert snapshot_untracked == [0, 1, *[0] * 12]
    # The gate: the first failure fails it (untracked); the later ones open nothing (the
    # gap is held open), so it lists the test once.
    failing_days = sorted(NOISE_DAYS)
    assert gate[failing_days[0] - 1] == (False, 1, 0)
    assert all(gate[day - 1] == (True, 0, 0) for day in failing_days[1:])
    # Its gap reads flaky on every surface that reads a gap's standing, on a passing day too.
    held = Gap.objects.get(test__key=noisy)
    assert held.is_open and held.flaky and gap_standing(held).label == "failed · flaky"
    # A rebuild holds it the same: the same row, open, flaky.
    project_recompute(project=project)
    assert list(Gap.objects.filter(test__key=noisy).values_list("pk", "is_open", "flaky")) == [
        (held.pk, True, True)
    ]


def _opened(series: list[bool]) -> int:
    """How many times ``series`` went from false (or its start) to true."""
    return sum(1 for i, now in enumerate(series) if now and not (i and series[i - 1]))


MANY = 50  # runs in a day, every half hour
LAST_FAILURE = 37  # the flaky test fails runs 2, 7, ... 37 (one in five), then passes
EXIT_GREEN = 10


def _many_runs_a_day(project, *, history: bool) -> dict:
    """50 runs of tpu in a day, its flaky test failing one run in five until run 37, green
    after; what each surface said each run."""
    flaky = "test/test_f.py::F::every_fifth"
    project.history_rules = {"enabled": history, "exit_green": EXIT_GREEN}
    project.save()
    cpu = _run(project, "cpu", 0, START, "c0")
    results_upload(cpu, {flaky: P, STEADY[0]: P})
    parity_recompute(run=cpu)
    seen = {"open": [], "flaky": [], "gate": [], "runs": []}
    for n in range(1, MANY + 1):
        at = START + datetime.timedelta(minutes=30 * n)
        run = _run(project, "tpu", n, at, f"m{n}")
        failed = n % 5 == 2 and n <= LAST_FAILURE
        results_upload(run, {flaky: F if failed else P, STEADY[0]: P})
        parity_recompute(run=run)
        gap = Gap.objects.filter(project=project, test__key=flaky, is_open=True).first()
        seen["open"].append(gap is not None)
        seen["flaky"].append(gap is not None and gap_standing(gap).triage == "flaky")
        seen["gate"].append([g.test for g in run_verdict(run=run).gaps if g.test == flaky])
        seen["runs"].append(run)
    seen["rows"] = list(Gap.objects.filter(project=project, test__key=flaky).order_by("opened_at"))
    return seen


@pytest.mark.django_db
def test_at_many_runs_a_day_a_flaky_test_is_one_gap_opened_and_closed_once(project):
    other = project_create(slug="other", backends=["cpu", "tpu"], reference="cpu")
    off = _many_runs_a_day(other, history=False)
    on = _many_runs_a_day(project, history=True)
    failures = len([n for n in range(1, LAST_FAILURE + 1) if n % 5 == 2])
    assert failures == 8
    # Side by side: without states from history a gap row per failure, each opened and closed
    # the next run, and the gate lists the test at each failure...
    assert len(off["rows"]) == failures and _opened(off["open"]) == failures
    assert sum(1 for listed in off["gate"] if listed) == failures
    # ...with them, one gap row over the whole day: opened by the first failure (run 2),
    # flaky from the next run on, held open through every later pass and failure, and closed
    # once, by the run that made the test leave flaky: the tenth green run after its last
    # failure.
    assert len(on["rows"]) == 1 and _opened(on["open"]) == 1
    (row,) = on["rows"]
    leaves = LAST_FAILURE + EXIT_GREEN
    assert row.opened_run == on["runs"][1] and row.closed_run == on["runs"][leaves - 1]
    assert row.closed_at == on["runs"][leaves - 1].started_at and not row.is_open
    assert on["open"] == [2 <= n < leaves for n in range(1, MANY + 1)]
    assert on["flaky"] == [3 <= n < leaves for n in range(1, MANY + 1)]
    assert not GapEvent.objects.filter(gap=row).exists()  # it never flipped its state
    # The gate lists the flaky test once: the run that opened its gap.
    assert [n for n, listed in enumerate(on["gate"], start=1) if listed] == [2]
    assert not TestHistory.objects.filter(test__key="test/test_f.py::F::every_fifth",
                                          state="flaky").exists()  # fmt: skip


@pytest.mark.django_db
def test_a_held_gap_whose_test_fails_when_it_leaves_flaky_stays_a_plain_gap(project):
    # The test leaves flaky at a failing run (a third failure in a row: broken, which wins):
    # its gap stays open, a plain untracked gap, neither flaky nor closed.
    flaky = "test/test_f.py::F::every_fifth"
    project.history_rules = {"enabled": True}
    project.save()
    cpu = _run(project, "cpu", 0, START, "c0")
    results_upload(cpu, {flaky: P, STEADY[0]: P})
    parity_recompute(run=cpu)
    for n, outcome in enumerate("PFPFFF", start=1):
        run = _run(project, "tpu", n, START + datetime.timedelta(hours=n), f"h{n}")
        results_upload(run, {flaky: P if outcome == "P" else F, STEADY[0]: P})
        parity_recompute(run=run)
        gap = Gap.objects.filter(test__key=flaky, is_open=True).first()
        if 3 <= n < 6:  # flaky, and held open through its pass at run 3
            assert gap is not None and gap.flaky, n
    assert TestHistory.objects.get(test__key=flaky).state == "broken"
    gap = Gap.objects.get(test__key=flaky)
    assert gap.is_open and not gap.flaky and gap_standing(gap).triage == "untracked"
    assert gap.state == "failed"


@pytest.mark.django_db
def test_a_project_that_keeps_no_states_from_history_pays_nothing_for_them(project):
    # Off by default: no window is kept and the noisy test's gaps stay the one run's.
    noisy = "test/test_n.py::N::noisy"
    cpu = _run(project, "cpu", 0, START, "c0")
    results_upload(cpu, {noisy: P, STEADY[0]: P})
    parity_recompute(run=cpu)
    open_days = set()
    for day in range(1, 15):
        run = _run(project, "tpu", day, START + datetime.timedelta(days=day), f"d{day}")
        results_upload(run, {noisy: F if day in NOISE_DAYS else P, STEADY[0]: P})
        parity_recompute(run=run)
        if Gap.objects.filter(test__key=noisy, is_open=True).exists():
            open_days.add(day)
    assert not TestHistory.objects.exists()
    assert not Gap.objects.filter(flaky=True).exists()
    assert open_days == NOISE_DAYS  # opened and closed with each noisy run, as before
