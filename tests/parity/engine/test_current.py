"""The current-outcomes step alone: a run's results (written by the writer) combine into one
outcome per test, replacing the backend's previous current outcomes."""

from django.db import connection

from parity.engine.current import current_outcomes_refresh
from parity.models import CurrentOutcome, Outcome
from tests.parity.engine.rows import backend_of, results_upload, run_make

A = "test/a.py::TestA::"
P, S, F, E = Outcome.PASSED, Outcome.SKIPPED, Outcome.FAILED, Outcome.ERROR


def current(backend) -> dict[str, tuple[int, str | None]]:
    rows = CurrentOutcome.objects.filter(backend=backend).values_list(
        "test__key", "outcome", "reason__text"
    )
    return {key: (outcome, reason) for key, outcome, reason in rows}


def test_shards_combine_error_over_failed_over_passed_over_skipped(project):
    tpu = backend_of(project, "tpu")
    run = run_make(project, "tpu")
    results_upload(run, {f"{A}t1": P, f"{A}t2": (S, "later"), f"{A}t3": F, f"{A}t4": (S, "a")})
    results_upload(run, {f"{A}t1": F, f"{A}t2": P, f"{A}t3": E, f"{A}t4": (S, "b")})

    assert current_outcomes_refresh(backend=tpu, run=run) == 4
    assert current(tpu) == {
        f"{A}t1": (F, None),
        f"{A}t2": (P, None),
        f"{A}t3": (E, None),
        f"{A}t4": (S, "b"),  # a tie: the later result gives the reason
    }


def test_a_new_run_replaces_the_outcomes_and_rewrites_only_changed_rows(project):
    tpu, gpu = backend_of(project, "tpu"), backend_of(project, "gpu")
    day1 = run_make(project, "tpu", day="2026-04-01")
    results_upload(day1, {f"{A}same": P, f"{A}changes": P, f"{A}gone": P})
    current_outcomes_refresh(backend=tpu, run=day1)
    gpu_run = run_make(project, "gpu")
    results_upload(gpu_run, {f"{A}same": P})
    current_outcomes_refresh(backend=gpu, run=gpu_run)
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, ctid::text FROM parity_currentoutcome")
        versions = dict(cursor.fetchall())

    day2 = run_make(project, "tpu", day="2026-04-02")
    results_upload(day2, {f"{A}same": P, f"{A}changes": (S, "later"), f"{A}new": P})
    assert current_outcomes_refresh(backend=tpu, run=day2) == 3

    assert current(tpu) == {
        f"{A}same": (P, None),
        f"{A}changes": (S, "later"),
        f"{A}new": (P, None),
    }
    assert current(gpu) == {f"{A}same": (P, None)}  # another backend's rows stay
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, ctid::text FROM parity_currentoutcome")
        rewritten = {pk for pk, ctid in cursor.fetchall() if versions.get(pk) != ctid}
    same, changed = (
        CurrentOutcome.objects.get(backend=tpu, test__key=f"{A}{name}").pk
        for name in ("same", "changes")
    )
    assert changed in rewritten and same not in rewritten
