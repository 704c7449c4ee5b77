"""The settings page of states from history (docs/history-states.md, "Changing the rules"): a
maintainer's Preview lists every (test, backend) whose state new rules would change, from what
to what, with its window's counts, and writes nothing; Save writes the rules and every surface
reads the new states at once (a gap held open while its test was flaky is released). The
expected states are judged here by hand from the seeded outcomes, not by the code under test.
Readers are refused; a rule out of its range is a form error and saves nothing."""

import datetime
import hashlib
import re

import pytest
from django.test import Client

from parity.engine import parity_recompute
from parity.models import Gap, Outcome, Role, Run, TestHistory
from tests.parity.dashboard.conftest import member
from tests.parity.engine.rows import backend_of, results_upload

START = datetime.datetime(2026, 6, 1, tzinfo=datetime.UTC)
RUNS = 30  # tpu's runs, every two hours: the window (100 runs, 14 days) holds them all
FAILS = {  # test -> the tpu runs it fails in
    "test/test_h.py::H::every_fifth": {n for n in range(1, RUNS + 1) if n % 5 == 2},
    "test/test_h.py::H::every_tenth": {7, 17, 27},
    "test/test_h.py::H::broken_from_20": set(range(20, RUNS + 1)),
    "test/test_h.py::H::late_pair": {25, 29, 30},
    "test/test_h.py::H::failed_last": {30},
    "test/test_h.py::H::steady": set(),  # never failed: followed by no window
}
DEFAULTS = {"min_flips": 2, "flip_rate": 0.01, "break_length": 3, "exit_green": 30}
URL = "/p/{}/history/settings/"


def _sequence(test: str) -> str:
    """The test's outcomes on tpu over the window, oldest first."""
    return "".join("F" if n in FAILS[test] else "P" for n in range(1, RUNS + 1))


def _by_hand(seq: str, *, min_flips: int, flip_rate: float, break_length: int, exit_green: int):
    """The state (docs/history-states.md, "The rules") and flips of a window, by hand: broken
    when the newest ``break_length`` runs failed; a run of that many failures is a break whose
    entries and edges are no flips; flaky at ``min_flips`` flips and ``flip_rate`` of the runs
    unless it ends in ``exit_green`` passes."""
    in_break = [False] * len(seq)
    for match in re.finditer("F+", seq):
        if len(match.group()) >= break_length:
            in_break[match.start() : match.end()] = [True] * len(match.group())
    flips = sum(
        1
        for i in range(1, len(seq))
        if seq[i] != seq[i - 1] and not in_break[i] and not in_break[i - 1]
    )
    if seq.endswith("F" * break_length):
        return "broken", flips
    green = len(seq) - len(seq.rstrip("P"))
    if flips >= min_flips and flips >= flip_rate * (len(seq) - 1) and green < exit_green:
        return "flaky", flips
    return "", flips


def _expected(new: dict) -> set[tuple]:
    """(test, backend, before, after, runs, failures, flips) of each followed test whose state
    ``new`` (over the defaults) changes."""
    found = set()
    for test, fails in FAILS.items():
        if not fails:
            continue
        seq = _sequence(test)
        before, _ = _by_hand(seq, **DEFAULTS)
        after, flips = _by_hand(seq, **{**DEFAULTS, **new})
        if before != after:
            found.add((test, "tpu", before, after, len(seq), len(fails), flips))
    return found


@pytest.fixture
def history(project):
    project.history_rules = {"enabled": True}
    project.save()
    cpu = Run.objects.create(
        project=project, backend=backend_of(project, "cpu"), key="cpu-0", commit="0" * 40,
        branch=project.default_branch, complete=True, started_at=START,
    )  # fmt: skip
    results_upload(cpu, dict.fromkeys(FAILS, Outcome.PASSED))
    parity_recompute(run=cpu)
    for n in range(1, RUNS + 1):
        run = Run.objects.create(
            project=project, backend=backend_of(project, "tpu"), key=f"tpu-{n}",
            commit=hashlib.sha1(f"c{n}".encode()).hexdigest(), branch=project.default_branch,
            complete=True, started_at=START + datetime.timedelta(hours=2 * n),
        )  # fmt: skip
        results_upload(
            run, {t: Outcome.FAILED if n in f else Outcome.PASSED for t, f in FAILS.items()}
        )
        parity_recompute(run=run)
    return project


def _form(**rules) -> dict:
    values = {
        "enabled": "on", "window_runs": 100, "window_days": 14, "flip_rate": 1, "min_flips": 2,
        "break_length": 3, "exit_green": 30, "infra_fail_fraction": 80,
    }  # fmt: skip
    return {**values, **rules}


_ROW = re.compile(
    r'<tr data-test="(\d+)" data-backend="([\w-]+)" data-before="(\w*)" data-after="(\w*)"\s+'
    r'data-runs="(\d+)" data-failures="(\d+)" data-flips="(\d+)">\s*'
    r'<td class="test-id"><a [^>]*>([^<]+)</a>'
)


def _preview(response) -> set[tuple]:
    assert response.status_code == 200, response.content[:500]
    return {
        (test, backend, before, after, int(runs), int(failures), int(flips))
        for _pk, backend, before, after, runs, failures, flips, test in _ROW.findall(
            response.content.decode()
        )
    }


def _states(project) -> dict[str, str]:
    return dict(TestHistory.objects.filter(project=project).values_list("test__key", "state"))


@pytest.mark.django_db
@pytest.mark.parametrize(
    "new",
    [
        {"min_flips": 1, "break_length": 12},  # a break of 11 becomes a flip; one flip is flaky
        {"min_flips": 7, "break_length": 2},  # fewer flaky; two failures at the end are broken
        {"exit_green": 3},  # three passes at the end leave flaky
    ],
)
def test_the_preview_lists_what_the_new_rules_would_change_and_writes_nothing(history, new):
    client = member(history, Role.MAINTAINER)
    stored = _states(history)
    assert stored == {t: _by_hand(_sequence(t), **DEFAULTS)[0] for t, f in FAILS.items() if f}
    form = _form(**{k: v * 100 if k == "flip_rate" else v for k, v in new.items()})
    shown = _preview(client.post(URL.format(history.slug), {**form, "action": "preview"}))
    expected = _expected(new)
    assert len(expected) >= 2  # the rules move some states: the check is not empty
    assert shown == expected
    assert _states(history) == stored
    history.refresh_from_db()
    assert history.history_rules == {"enabled": True}


@pytest.mark.django_db
def test_turning_states_from_history_off_previews_every_state_to_neither(history):
    client = member(history, Role.MAINTAINER)
    form = {k: v for k, v in _form().items() if k != "enabled"}
    shown = _preview(client.post(URL.format(history.slug), {**form, "action": "preview"}))
    assert {(t, before, after) for t, _b, before, after, *_ in shown} == {
        (t, s, "") for t, s in _states(history).items() if s
    }


@pytest.mark.django_db
def test_save_writes_the_rules_and_every_gap_reads_the_new_states_at_once(history):
    client = member(history, Role.MAINTAINER)
    tpu = backend_of(history, "tpu")
    released = "test/test_h.py::H::every_tenth"  # flaky now, passing: its gap is held open
    held = Gap.objects.get(backend=tpu, test__key=released, is_open=True)
    assert held.flaky
    new = {"min_flips": 7, "break_length": 2}
    response = client.post(URL.format(history.slug), {**_form(**new), "action": "save"})
    assert response.status_code == 302
    history.refresh_from_db()
    assert history.history_rules["min_flips"] == 7 and history.history_rules["break_length"] == 2
    after = {t: _by_hand(_sequence(t), **{**DEFAULTS, **new})[0] for t, f in FAILS.items() if f}
    assert {t: s for t, s in _states(history).items() if t in after} == after
    assert after[released] == ""
    held.refresh_from_db()
    last = Run.objects.get(key=f"tpu-{RUNS}")
    assert (held.is_open, held.closed_run_id) == (False, last.pk)
    # Every open gap reads flaky exactly when its test is flaky under the new rules.
    marks = dict(Gap.objects.filter(backend=tpu, is_open=True).values_list("test__key", "flaky"))
    assert marks and marks == {t: after.get(t) == "flaky" for t in marks}
    # Nothing left to preview: the saved rules judge as they were saved.
    again = client.post(URL.format(history.slug), {**_form(**new), "action": "preview"})
    assert _preview(again) == set()


@pytest.mark.django_db
def test_a_bad_value_is_a_form_error_and_saves_nothing(history):
    client = member(history, Role.MAINTAINER)
    stored = _states(history)
    for bad, says in (
        ({"break_length": 0}, "greater than or equal to 2"),
        ({"flip_rate": 150}, "less than or equal to 100"),
        ({"window_runs": 10, "break_length": 50}, "cannot fit a window of 10 runs"),
    ):
        response = client.post(URL.format(history.slug), {**_form(**bad), "action": "save"})
        assert response.status_code == 200
        assert says in response.content.decode()
        assert 'class="errorlist' in response.content.decode()
        history.refresh_from_db()
        assert history.history_rules == {"enabled": True}
        assert _states(history) == stored


@pytest.mark.django_db
def test_only_maintainers_open_or_save_the_rules(history):
    url = URL.format(history.slug)
    viewer = member(history, Role.VIEWER)
    assert viewer.get(url).status_code == 403
    assert viewer.post(url, {**_form(min_flips=9), "action": "save"}).status_code == 403
    anonymous = Client().get(url)
    assert anonymous.status_code == 302 and "login" in anonymous["Location"]
    history.refresh_from_db()
    assert history.history_rules == {"enabled": True}
    maintainer = member(history, Role.MAINTAINER)
    assert maintainer.get(url).status_code == 200
    # The compare views' list links the page for maintainers, not for readers.
    link = f'href="{url}"'
    assert link in maintainer.get(f"/p/{history.slug}/compare/").content.decode()
    assert link not in viewer.get(f"/p/{history.slug}/compare/").content.decode()


@pytest.mark.django_db
def test_turning_them_off_clears_the_flaky_marks_and_closes_the_held_gaps(history):
    client = member(history, Role.MAINTAINER)
    tpu = backend_of(history, "tpu")
    held = Gap.objects.get(backend=tpu, test__key="test/test_h.py::H::every_tenth", is_open=True)
    assert Gap.objects.filter(backend=tpu, is_open=True, flaky=True).count() > 1
    form = {k: v for k, v in _form().items() if k != "enabled"}
    assert client.post(URL.format(history.slug), {**form, "action": "save"}).status_code == 302
    history.refresh_from_db()
    assert history.history_rules["enabled"] is False
    assert not Gap.objects.filter(project=history, is_open=True, flaky=True).exists()
    held.refresh_from_db()
    assert not held.is_open
    # Open now: exactly the tests failing in tpu's current run.
    assert set(
        Gap.objects.filter(backend=tpu, is_open=True).values_list("test__key", flat=True)
    ) == {t for t, f in FAILS.items() if RUNS in f}
