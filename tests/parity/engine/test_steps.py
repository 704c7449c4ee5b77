"""The recompute as declared steps (``recompute.STEPS``): each reads only the temporary tables an
earlier step of its scope's list wrote, the SQL it runs names no temporary table it does not
declare (nor a temporary table ``temp_tables`` does not know), a step that leaves no table it
declares is caught, and each step's time is in the log."""

import datetime
import logging
import re
from collections import defaultdict

import pytest
from django.db import connection

from parity.engine import parity_recompute, project_recompute, recompute, steps, temp_tables
from parity.engine.recompute import BACKEND_MOVE, BACKENDS_MOVE, STEPS
from parity.engine.scope import ScopeKind
from parity.engine.steps import Step, StepWritesMissing, steps_run
from parity.models import Outcome
from parity.services.triage import TriageRequest, triage_create
from tests.parity.engine.rows import results_upload, run_at
from tests.parity.engine.test_nightly_scope import START, _nightlies


def _with_move(kind: ScopeKind) -> tuple[Step, ...]:
    return ((BACKENDS_MOVE if kind is ScopeKind.REBUILD else BACKEND_MOVE), *STEPS[kind])


@pytest.mark.parametrize("kind", list(ScopeKind))
def test_each_step_reads_only_what_an_earlier_step_of_its_scope_wrote(kind):
    written: set[str] = set()
    scratch: dict[str, str] = {}
    for step in _with_move(kind):
        declared = {*step.reads, *step.writes, *step.scratch}
        assert declared <= set(temp_tables.ALL), step.name
        assert set(step.reads) <= written, f"{kind}: {step.name} reads what no step wrote"
        written |= set(step.writes)
        for table in step.scratch:
            scratch.setdefault(table, step.name)
    for step in _with_move(kind):  # a step's own tables are no other step's hand-off
        for table in step.reads:
            assert scratch.get(table, step.name) == step.name, f"{kind}: {step.name} {table}"


def test_every_hand_off_is_declared_by_a_step_that_writes_it_and_one_that_reads_it():
    every = [step for kind in ScopeKind for step in _with_move(kind)]
    assert {table for step in every for table in step.writes} == set(temp_tables.HANDED)
    assert {table for step in every for table in step.reads} == set(temp_tables.HANDED)


_TEMP = re.compile(r"\bparity_[a-z_]+\b")
_CREATED = re.compile(r"CREATE TEMP TABLE (\w+)", re.IGNORECASE)
_WRITTEN = re.compile(r"(?:CREATE TEMP TABLE|INSERT INTO|DELETE FROM|UPDATE)\s+(\w+)", re.I)


@pytest.mark.django_db
def test_the_sql_each_step_runs_names_only_the_temporary_tables_it_declares(project, monkeypatch):
    """Random nightlies, late shards, reference runs and rebuilds (``test_nightly_scope``),
    with the SQL each step ran read back: the declarations and the SQL cannot drift apart."""
    ran: list[str] = []
    named: dict[Step, set[str]] = defaultdict(set)
    scopes: set[ScopeKind] = set()

    def recorded(execute, sql, params, many, context):
        text = sql if isinstance(sql, str) else sql.as_string(context["connection"].connection)
        ran.append(text)
        return execute(sql, params, many, context)

    done = steps._done

    def checked(step: Step, started: float) -> None:
        text = "\n".join(ran)
        ran.clear()
        assert set(_CREATED.findall(text)) <= set(temp_tables.ALL), step.name
        temp = set(_TEMP.findall(text)) & set(temp_tables.ALL)
        assert temp <= {*step.reads, *step.writes, *step.scratch}, step.name
        written = set(_WRITTEN.findall(text)) & set(temp_tables.ALL)
        assert written <= {*step.writes, *step.scratch}, step.name
        named[step] |= temp
        done(step, started)

    pick = recompute.scope_pick

    def picked(**kwargs):
        scope = pick(**kwargs)
        scopes.add(scope.kind)
        return scope

    # A triage that matches nothing, stale once marked: the touched gaps are matched again.
    request = TriageRequest(kind="intended", match="test/test_z.py", backend="tpu", note="none")
    triage_create(project=project, request=request)
    monkeypatch.setattr("parity.engine.steps._done", checked)
    monkeypatch.setattr(recompute, "scope_pick", picked)
    with connection.execute_wrapper(recorded):
        _nightlies(seed=1, steps=24)

    assert scopes >= {
        ScopeKind.EVERY_TEST,
        ScopeKind.REFERENCE_MOVED_ON,
        ScopeKind.NIGHTLY,
        ScopeKind.LATE_SHARD,
    }
    # Every declaration is borne out by some run of its step (the rebuilds too).
    for kind in ScopeKind:
        for step in _with_move(kind):
            declared = {*step.reads, *step.writes}
            assert declared <= named[step], f"{kind}: {step.name} {declared - named[step]}"


@pytest.mark.django_db
def test_a_step_that_leaves_no_table_it_declares_is_caught():
    step = Step("nothing.written", lambda state: None, writes=(temp_tables.GAP_MOVES,))
    with pytest.raises(StepWritesMissing, match="nothing.written left no parity_gap_moves"):
        steps_run(None, (step,))


NIGHTLY_STEPS = [
    "backend.move",
    "transitions.detect",
    "history.update",
    "rollups.reason_daily",
    "gaps.scope",
    "gaps.desired",
    "pending.split",
    "gaps.moves_before",
    "gaps.write",
    "gaps.moves_after",
    "triages.apply",
    "triages.lapses",
    "history.mark",
    "snapshots.write",
    "triages.mark_stale",
    "rollups.file_cells",
    "owners.add",
    "rollups.file_durations",
]


def _tests(n: int) -> dict[str, Outcome]:
    return {f"test/test_a.py::T::t{k}": Outcome.PASSED for k in range(n)}


@pytest.mark.django_db
def test_a_nightly_logs_each_step_and_its_time_then_the_total(project, caplog):
    cpu = run_at(project, "cpu", START)
    results_upload(cpu, _tests(6))
    parity_recompute(run=cpu)
    first = run_at(project, "tpu", START + datetime.timedelta(hours=1))
    results_upload(first, _tests(4))
    parity_recompute(run=first)
    nightly = run_at(project, "tpu", START + datetime.timedelta(days=1))
    results_upload(nightly, _tests(5))

    caplog.set_level(logging.INFO, logger="parity.engine")
    caplog.clear()
    parity_recompute(run=nightly)

    steps = [r for r in caplog.records if r.name == "parity.engine"]
    done = [re.fullmatch(r"DONE (\S+) \((\d+)ms\)", r.getMessage()) for r in steps]
    assert all(done) and {r.levelno for r in steps} == {logging.INFO}
    assert [m[1] for m in done] == NIGHTLY_STEPS
    total = [r.getMessage() for r in caplog.records if r.name == "parity.engine.recompute"]
    assert len(total) == 1
    assert f"parity recomputed for run {nightly.pk}" in total[0]
    assert f"nightly (replacing run {first.pk})" in total[0]


@pytest.mark.django_db
def test_a_nightly_with_no_reference_run_diffs_every_test_and_says_why(project, caplog):
    first = run_at(project, "tpu", START)
    results_upload(first, _tests(4))
    parity_recompute(run=first)
    nightly = run_at(project, "tpu", START + datetime.timedelta(days=1))
    results_upload(nightly, _tests(5))

    caplog.set_level(logging.INFO, logger="parity.engine")
    caplog.clear()
    parity_recompute(run=nightly)

    total = [r.getMessage() for r in caplog.records if r.name == "parity.engine.recompute"]
    assert "every test (a nightly that could not be bounded)" in total[0]
    done = [r.getMessage().split()[1] for r in caplog.records if r.name == "parity.engine"]
    assert "gaps.scope" not in done and "gaps.moves_before" not in done


@pytest.mark.django_db
def test_a_rebuild_runs_its_own_steps(project, caplog):
    cpu = run_at(project, "cpu", START)
    results_upload(cpu, _tests(3))
    parity_recompute(run=cpu)

    caplog.set_level(logging.INFO, logger="parity.engine")
    caplog.clear()
    project_recompute(project=project)

    done = [r.getMessage().split()[1] for r in caplog.records if r.name == "parity.engine"]
    assert done == ["backends.move"] + [step.name for step in STEPS[ScopeKind.REBUILD]]
