"""The engine, the verdict and the aligned view each compose the rules of
``parity.definitions`` (which run may be current, a test's outcome in a run, a gap with its
state, pending and absent, the triage that applies): random histories of runs hold all three
to the plain-Python reading of those rules (``tests/parity/rules_model.py``).

A history mixes what each rule must tell apart: runs on the default branch, on no branch and
on another, probe runs, runs not complete yet, commits some backends share with the reference,
manifests naming crashed or unstarted files, tests the reference adds (pending on a backend
whose run is older) or drops, and triages by test, reason, pattern, backend and expiry."""

import datetime
import random

import pytest

from parity.engine import parity_recompute
from parity.models import Gap, PendingTest, Project, Result, Run, RunFile, TestCase, Triage
from parity.pure.globs import pattern_literal, pattern_regex, pattern_shape
from parity.result_reads.aligned import aligned_view
from parity.result_reads.verdict import run_verdict
from tests.parity import rules_model as model
from tests.parity.engine.rows import backend_of, reason_of, results_upload
from tests.parity.engine.rows import testcase_of as case_of
from tests.parity.engine.test_absent_states import manifest_write
from tests.parity.engine.test_nightly_scope import FILES, MANIFEST_ENTRIES, TESTS, _results

START = datetime.datetime(2026, 5, 1, tzinfo=datetime.UTC)
BACKENDS = ("cpu", "cpu", "gpu", "tpu", "neuron")


def _triages(project: Project) -> None:
    """One triage of each way to name a gap, on every backend or one, one of them expired."""
    tpu = backend_of(project, "tpu")
    today = datetime.datetime.now(datetime.UTC).date()

    def make(kind="intended", backends=(), match="", **fields):
        derived = (
            {
                "match_regex": pattern_regex(match),
                "match_literal": pattern_literal(match),
                "match_shape": pattern_shape(match),
            }
            if match
            else {}
        )
        triage = Triage.objects.create(
            project=project, kind=kind, note="x", match=match, **derived, **fields
        )
        triage.backends.set(backends)

    make(test=case_of(project, TESTS[1]))
    make(test=case_of(project, TESTS[1]), backends=[tpu])
    make(reason=reason_of(project, "no fp64"))
    make(reason=reason_of(project, "no sparse"), expires_on=today - datetime.timedelta(days=1))
    make(match=FILES[2])
    make(match=f"{FILES[3]}::T::t[12]", backends=[tpu])
    make(match="**::T::t3", expires_on=today)


def _run(project: Project, backend: str, at, rng, n: int) -> Run:
    roll = rng.random()
    branch = project.default_branch
    if roll < 0.1:
        branch = ""
    elif roll < 0.2:
        branch = "feature"
    run = Run.objects.create(
        project=project,
        backend=backend_of(project, backend),
        key=f"{n}-{backend}",
        commit=f"c{rng.randint(0, n // 3 + 1)}",  # some commits run by several backends
        branch=branch,
        probe=rng.random() < 0.1,
        complete=rng.random() > 0.1,
        started_at=at,
    )
    results = _results(rng, reference=backend == "cpu")
    if results:
        results_upload(run, results)
    if backend != "cpu" and rng.random() < 0.7:
        files = rng.sample(FILES, rng.randint(1, 3))
        manifest_write(run, *(rng.choice(MANIFEST_ENTRIES)(file) for file in files))
    return run


def _world(project: Project, history: tuple[int, ...]) -> model.World:
    """The project's inputs as plain data: runs with their results and manifests, tests,
    triages; ``history``: the reference's runs in the order they became current."""
    results: dict[int, list] = {}
    for row in Result.objects.filter(run__project=project).values_list(
        "id", "run_id", "test_id", "outcome", "reason_id"
    ):
        results.setdefault(row[1], []).append(model.Result(row[0], row[2], row[3], row[4]))
    manifests: dict[int, dict] = {}
    for run_id, file, state in (
        RunFile.objects.filter(run__project=project)
        .exclude(state="ran")
        .values_list("run_id", "file", "state")
    ):
        manifests.setdefault(run_id, {})[file] = state
    runs = tuple(
        model.Run(
            id=r.pk,
            backend=r.backend_id,
            started_at=r.started_at,
            commit=r.commit,
            branch=r.branch,
            complete=r.complete,
            probe=r.probe,
            results_expired=r.results_expired_at is not None,
            results=tuple(results.get(r.pk, ())),
            manifest=manifests.get(r.pk, {}),
        )
        for r in Run.objects.filter(project=project)
    )
    triages = tuple(
        model.Triage(
            id=t.pk,
            kind=t.kind,
            created_at=t.created_at,
            test=t.test_id,
            reason=t.reason_id,
            match_regex=t.match_regex,
            backends=frozenset(b.pk for b in t.backends.all()),
            expires_on=t.expires_on,
        )
        for t in Triage.objects.filter(project=project).prefetch_related("backends")
    )
    tests = {t.pk: (t.key, t.file) for t in TestCase.objects.filter(project=project)}
    return model.World(
        runs=runs,
        tests=tests,
        reference=project.reference_backend_id,
        default_branch=project.default_branch,
        triages=triages,
        reference_history=history,
    )


def _pick(world: model.World, backend: int, test: int, reason: int | None) -> int | None:
    today = datetime.datetime.now(datetime.UTC).date()
    triage = model.triage_pick(world, backend=backend, test=test, reason=reason, today=today)
    return triage.id if triage else None


def _engine_holds(project: Project, world: model.World, where: str) -> None:
    expected = model.engine_gaps(world)
    gaps: dict[int, dict] = {}
    for backend, test, state, reason, triage in Gap.objects.filter(
        project=project, is_open=True
    ).values_list("backend_id", "test_id", "state", "reason_id", "triage_id"):
        gaps.setdefault(backend, {})[test] = (state, reason, triage)
    pending: dict[int, set] = {}
    for backend, test in PendingTest.objects.filter(project=project).values_list(
        "backend_id", "test_id"
    ):
        pending.setdefault(backend, set()).add(test)
    want = {
        backend: {
            test: (state, reason, _pick(world, backend, test, reason))
            for test, (state, reason) in found.gaps.items()
        }
        for backend, found in expected.items()
        if found.gaps
    }
    assert gaps == want, f"{where}: the engine's open gaps"
    want_pending = {b: found.pending for b, found in expected.items() if found.pending}
    assert pending == want_pending, f"{where}: the engine's pending tests"


def _verdict_holds(world: model.World, run: Run, where: str) -> None:
    expected = model.verdict(world, world.run(run.pk))
    verdict = run_verdict(run=run)
    assert verdict.baseline_run == expected.baseline, f"{where}: run {run.pk}'s baseline"
    opened = {g.test_id: g.state for g in verdict.gaps}
    assert opened == expected.opened, f"{where}: the gaps run {run.pk} opens"
    assert verdict.closed == len(expected.closed), f"{where}: the gaps run {run.pk} closes"
    outcomes = model.outcomes(world.run(run.pk))
    for g in verdict.gaps:
        reason = outcomes[g.test_id][1] if g.test_id in outcomes else None
        assert g.exemption == _pick(world, run.backend_id, g.test_id, reason), where


def _aligned_holds(project: Project, world: model.World, where: str) -> None:
    expected = model.aligned_gaps(world)
    view = aligned_view(project=project, numbers=True, gaps=True)
    pairs = {b: (run.id, ref.id) for b, (run, ref) in model.aligned_pairs(world).items()}
    assert {b: (p.run, p.reference_run) for b, p in view.pairs.items()} == pairs, where
    ids = {name: pk for pk, name in view.names.items()}
    triages = {t.id: t.kind for t in world.triages}
    found: dict[int, dict] = {}
    for g in view.gaps:
        found.setdefault(ids[g.backend], {})[g.test_id] = (g.state, g.triage)
    want = {}
    for backend, gaps in expected.items():
        for test, (state, reason) in gaps.items():
            if state != "reference_missing":
                kind = triages.get(_pick(world, backend, test, reason))
                want.setdefault(backend, {})[test] = (state, kind)
    assert found == want, f"{where}: the aligned view's gaps"
    missing = {
        b: sum(s == "reference_missing" for s, _r in gaps.values()) for b, gaps in expected.items()
    }
    assert {b: n.reference_missing for b, n in view.numbers.items()} == missing, where


def _history(seed: int, steps: int) -> None:
    rng = random.Random(seed)
    project = Project.objects.get(slug="pytorch-xla")
    _triages(project)
    latest: dict[str, datetime.datetime] = {}
    reference_history: list[int] = []
    runs = []
    for n in range(steps):
        backend = rng.choice(BACKENDS)
        # A backend's run a few hours either side of the reference's latest, so tests are
        # pending on it or dropped since its run started.
        at = START + datetime.timedelta(hours=6 * n + rng.choice((-5, -1, 0, 1, 3)))
        at = max(at, latest.get(backend, at) + datetime.timedelta(minutes=1))
        latest[backend] = at
        run = _run(project, backend, at, rng, n)
        runs.append(run)
        if run.complete:
            parity_recompute(run=run)
        now = model.current_run(_world(project, ()), project.reference_backend_id)
        if now is not None and (not reference_history or reference_history[-1] != now.id):
            reference_history.append(now.id)
    world = _world(project, tuple(reference_history))
    where = f"seed {seed}"
    _engine_holds(project, world, where)
    for run in runs[-8:]:
        _verdict_holds(world, run, where)
    _aligned_holds(project, world, where)


@pytest.mark.django_db
@pytest.mark.parametrize("seed", range(6))
def test_the_engine_the_verdict_and_the_aligned_view_follow_the_rules(project, seed):
    _history(seed, steps=20)
