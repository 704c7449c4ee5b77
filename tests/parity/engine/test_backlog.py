"""Recomputes under a backlog: a backend's runs completed one after another before the worker
got to their recomputes. Only the newest is recomputed; the older ones return at once, even
while another recompute of the project holds its lock, and the end state is the one a single
recompute of the newest run gives.

Committed rows (``transaction=True``): the lock is held from another connection.
"""

import threading

import pytest
from django.db import connection, transaction

from parity.engine import parity_recompute
from parity.models import BackendState, CurrentOutcome, Gap, Outcome, Snapshot
from parity.models.projects import project_lock
from parity.services.projects import project_create
from tests.parity.engine.rows import results_upload, run_make

A = "test/a.py::TestA::"
CPU = {f"{A}test_{n}": Outcome.PASSED for n in range(1, 7)}
# tpu's nights: each one fixes a test and breaks another.
NIGHTS = {
    "2026-04-02": {**CPU, f"{A}test_1": (Outcome.SKIPPED, "no op"), f"{A}test_2": Outcome.FAILED},
    "2026-04-03": {**CPU, f"{A}test_2": Outcome.FAILED, f"{A}test_3": Outcome.ERROR},
    "2026-04-04": {k: v for k, v in CPU.items() if k != f"{A}test_4"}
    | {f"{A}test_5": (Outcome.SKIPPED, "later")},
}


def _project(slug: str):
    project = project_create(slug=slug, backends=["cpu", "tpu"], reference="cpu")
    cpu = run_make(project, "cpu", day="2026-04-01")
    with transaction.atomic():  # the writer's one transaction, as the ingest task opens it
        results_upload(cpu, CPU)
    assert parity_recompute(run=cpu) is not None
    return project


def _tpu_runs(project, days):
    runs = []
    for day in days:
        runs.append(run_make(project, "tpu", day=day))
        with transaction.atomic():
            results_upload(runs[-1], NIGHTS[day])
    return runs


def _state(project) -> dict:
    """What pages read of tpu, by test key (ids differ between projects)."""
    tpu = project.backends.get(name="tpu")
    state = BackendState.objects.get(backend=tpu)
    snapshot = Snapshot.objects.get(pk=state.snapshot_id)
    return {
        "current run": state.current_run.key,
        "outcomes": set(
            CurrentOutcome.objects.filter(backend=tpu).values_list(
                "test__key", "outcome", "reason__text"
            )
        ),
        "open gaps": set(
            Gap.objects.filter(backend=tpu, is_open=True).values_list(
                "test__key", "state", "opened_run__key"
            )
        ),
        "snapshot": (snapshot.run.key, snapshot.score, snapshot.failed, snapshot.missing),
    }


class LockHeld:
    """The project's lock, held by another connection (another recompute, a triage) until
    ``release``."""

    def __init__(self, project_id: int) -> None:
        self.held, self.done = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self._hold, args=(project_id,))

    def _hold(self, project_id: int) -> None:
        try:
            with transaction.atomic():
                project_lock(project_id=project_id)
                self.held.set()
                self.done.wait(30)
        finally:
            connection.close()

    def __enter__(self) -> "LockHeld":
        self.thread.start()
        assert self.held.wait(10)
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join(10)


@pytest.mark.django_db(transaction=True)
def test_only_the_newest_of_queued_runs_is_recomputed_and_the_others_skip_the_lock():
    backlog = _project("backlog")
    runs = _tpu_runs(backlog, NIGHTS)

    with LockHeld(backlog.pk), connection.cursor() as cursor:
        cursor.execute("SET lock_timeout = '2s'")  # waiting for the lock fails the test
        try:
            skipped = [parity_recompute(run=run) for run in runs[:-1]]
        finally:
            cursor.execute("RESET lock_timeout")
    newest = parity_recompute(run=runs[-1])

    assert skipped == [None, None]
    assert newest is not None and newest.run_id == runs[-1].pk
    single = _project("single")
    (last,) = _tpu_runs(single, list(NIGHTS)[-1:])
    parity_recompute(run=last)
    assert _state(backlog) == _state(single)


@pytest.mark.django_db(transaction=True)
def test_a_superseded_run_recomputed_late_leaves_the_newest_state():
    """Forward only: the newest run recomputed first, an older one's message arriving after."""
    project = _project("late")
    older, newest = _tpu_runs(project, list(NIGHTS)[:2])
    parity_recompute(run=newest)
    before = _state(project)

    assert parity_recompute(run=older) is None
    assert _state(project) == before
    assert before["current run"] == newest.key
