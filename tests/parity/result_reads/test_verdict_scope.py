"""A run's verdict against a baseline compares only the tests whose gap-ness can differ
between the two runs (``verdict._SCOPED``): every count, opened and closed gap and lacking
file must be what comparing every test the reference passes gives (``verdict._EVERY``, the
statement a first run's verdict uses). Random histories exercise each part of that scope: tests
in one run only, passing in one only, runs not complete, the reference's own runs, manifests
naming crashed files, and tests the reference first ran between a run's start and its
baseline's (pending in one of the two)."""

import datetime
import functools
import random

import pytest

from parity.engine import parity_recompute
from parity.models import Outcome, Project, Run
from parity.pure.run_manifest import FileRun
from parity.result_reads import verdict
from tests.parity.engine.rows import results_upload, run_at
from tests.parity.engine.test_absent_states import manifest_write

FILES = [f"test/test_{f}.py" for f in "abcd"]
START = datetime.datetime(2026, 6, 1, tzinfo=datetime.UTC)


def _results(rng: random.Random, tests: list[str]) -> dict:
    """Some of ``tests`` (a file left out now and then), passing, skipped or failing."""
    left_out = {file for file in FILES if rng.random() < 0.2}
    results = {}
    for test in tests:
        if test.split("::")[0] in left_out or rng.random() < 0.1:
            continue
        roll = rng.random()
        if roll < 0.65:
            results[test] = Outcome.PASSED
        elif roll < 0.8:
            results[test] = (Outcome.SKIPPED, rng.choice(("no fp64", "see #12")))
        elif roll < 0.95:
            results[test] = (Outcome.FAILED, "RuntimeError")
        else:
            results[test] = Outcome.ERROR
    return results


def _verdicts(run: Run, monkeypatch) -> tuple:
    """The run's verdict, scoped and not, every gap and closed gap listed."""
    asked = {"gaps_limit": None, "closed_limit": 10_000, "lacking": True}
    scoped = verdict.run_verdict(run=run, **asked)
    with monkeypatch.context() as patched:
        patched.setattr(verdict, "_prefix", functools.partial(verdict._prefix, scoped=False))
        return scoped, verdict.run_verdict(run=run, **asked)


def _history(seed: int, steps: int, monkeypatch) -> int:
    """Runs of random backends, each judged both ways; returns how many had a baseline."""
    rng = random.Random(seed)
    project = Project.objects.get(slug="pytorch-xla")
    tests = [f"{file}::T::t{n}" for file in FILES for n in range(5)]
    latest, judged = {}, 0
    for n in range(steps):
        backend = rng.choice(("cpu", "cpu", "gpu", "tpu"))
        if backend == "cpu" and rng.random() < 0.5:  # the reference adds tests now and then
            tests.append(f"{rng.choice(FILES)}::T::new{n}")
        at = START + datetime.timedelta(hours=6 * n + rng.choice((-5, -1, 0, 2)))
        at = max(at, latest.get(backend, at) + datetime.timedelta(minutes=1))
        latest[backend] = at
        run = run_at(project, backend, at, name=str(n))
        results_upload(run, _results(rng, tests))
        if backend != "cpu" and rng.random() < 0.4:
            manifest_write(run, FileRun(rng.choice(FILES), signal="SIGSEGV"))
        if rng.random() < 0.25:  # a run CI has not completed: its absent tests may still come
            Run.objects.filter(pk=run.pk).update(complete=False)
            run.refresh_from_db()
        scoped, every = _verdicts(run, monkeypatch)
        assert scoped == every, f"seed {seed}, step {n}: {backend}'s run {run.pk}"
        judged += scoped.baseline_run is not None
        if run.complete:
            parity_recompute(run=run)
    return judged


@pytest.mark.django_db
@pytest.mark.parametrize("seed", range(6))
def test_a_verdict_against_its_baseline_compares_what_can_differ(project, seed, monkeypatch):
    # Most runs had a baseline: the scoped statement ran.
    assert _history(seed, steps=20, monkeypatch=monkeypatch) >= 10
