"""The suites matrix read from uploads through the upload API: each cell's run status apart from
its tests' results, the health of its last runs, and the mirror map that joins a suite's names
across backends and excludes it where it does not run (docs/suites.md)."""

import datetime
import json

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from parity.models import Suite
from parity.selectors import suite_matrix
from parity.services.suites import SuiteOnBackend, suite_map_load, suite_save
from tests.junit_builder import Case, junit_xml

pytestmark = pytest.mark.django_db

NOW = timezone.now()


def xml(*outcomes: str) -> tuple[str, bytes]:
    cases = [Case("TestA", f"test_{i}", o, file="test/a.py") for i, o in enumerate(outcomes)]
    return ("TEST-a.xml", junit_xml(*cases))


def send(ingest, backend, suite, day, *outcomes, manifest=None, complete=True, **fields):
    started = NOW - datetime.timedelta(days=day)
    commit = f"{day:040d}"
    response = ingest(
        *([xml(*outcomes)] if outcomes else []),
        backend=backend,
        commit=commit,
        suite=suite,
        run=f"{commit}-{backend}-{suite}",
        timestamp=started.isoformat(),
        complete="true" if complete else "false",
        **({"run_manifest": json.dumps({"files": manifest})} if manifest else {}),
        **fields,
    )
    assert response.status_code in (200, 202), response.content
    return response


def cells(matrix) -> dict[tuple[str, str], object]:
    return {(row.name, c.backend): c.cell for row in matrix.rows for c in row.cells}


def test_each_cell_reads_its_runs_status_apart_from_test_results(project, ingest):
    suite_map_load(
        project=project,
        suites={
            "main": {
                "promote_after": 3,  # the project's rule: three greens in a row gate
                "backends": {
                    "cpu": "test/run_tests.sh",
                    "tpu": "test/tpu/run_tests.sh",
                    "neuron": "test/neuron/run_tests.sh",
                },
            },
            "torch_ops": {
                "backends": {
                    "neuron": {
                        "excluded": True,
                        "reason": "defined in the runner but never called",
                        "issue_url": "https://github.com/pytorch/xla/issues/9577",
                    }
                }
            },
        },
    )
    for day in (3, 2, 1, 0):  # main on cpu: green four nights running
        send(ingest, "cpu", "test/run_tests.sh", day, "passed", "skipped")
    # tpu: a test the reference passes fails, untracked (the gate fails: red), yet the suite
    # ran; then a night with a file that timed out.
    send(ingest, "tpu", "test/tpu/run_tests.sh", 1, "failed", "passed")
    timed_out = [{"file": "test/a.py", "started": True, "timed_out": True, "exit_code": -9}]
    send(ingest, "tpu", "test/tpu/run_tests.sh", 0, "passed", manifest=timed_out)
    # neuron ran main last five days ago: stale under the default 48 hours.
    send(ingest, "neuron", "test/neuron/run_tests.sh", 5, "passed")
    # torch_ops: cpu's job produced no test at all (a manifest only): it failed to run.
    nothing = [{"file": "test/b.py", "started": False}]
    send(ingest, "cpu", "torch_ops", 0, manifest=nothing)
    # A job the map does not name is a row of its own.
    send(ingest, "gpu", "nightly-extras", 0, "passed")

    matrix = suite_matrix(project=project, now=NOW)
    got = cells(matrix)

    assert [row.name for row in matrix.rows] == ["main", "nightly-extras", "torch_ops"]
    assert [b.name for b in matrix.backends][0] == "cpu"  # the reference first
    assert got[("main", "cpu")].status == "ran"
    health = got[("main", "cpu")].health
    assert (health.runs, health.greens, health.consecutive_greens) == (4, 4, 4)
    assert health.pass_rate == 1.0
    assert got[("main", "cpu")].tier == "blocking"  # four greens, past the suite's three
    tpu = got[("main", "tpu")]
    assert tpu.status == "ran"
    assert (tpu.health.runs, tpu.health.greens, tpu.health.timeouts) == (2, 0, 1)
    assert tpu.last.failed_tests == 0 and tpu.last.timed_out_files == 1
    # A run's green is the gate's ok: neuron's test that fails where the reference skips it
    # opens no gap, so the run is green though a test failed.
    send(ingest, "neuron", "test/neuron/run_tests.sh", 4, "passed", "failed")
    neuron = cells(suite_matrix(project=project, now=NOW))[("main", "neuron")]
    assert (neuron.health.runs, neuron.health.greens, neuron.last.failed_tests) == (2, 2, 1)
    assert tpu.tier == "informing"  # two reds: not yet the default three
    assert got[("main", "neuron")].status == "stale"
    assert got[("main", "gpu")].status == "never_ran"
    assert got[("torch_ops", "cpu")].status == "failed_to_run"
    excluded = got[("torch_ops", "neuron")]
    assert excluded.status == "excluded"
    assert excluded.reason == "defined in the runner but never called"
    assert excluded.issue_url == "https://github.com/pytorch/xla/issues/9577"
    assert got[("torch_ops", "tpu")].status == "never_ran"
    assert got[("nightly-extras", "gpu")].status == "ran"
    assert next(r for r in matrix.rows if r.name == "nightly-extras").mapped is False
    names = {c.backend: c.name for c in next(r for r in matrix.rows if r.name == "main").cells}
    assert names["tpu"] == "test/tpu/run_tests.sh"
    assert matrix.statuses == {
        "ran": 3,
        "failed_to_run": 1,
        "stale": 1,
        "pending": 0,
        "never_ran": 6,
        "excluded": 1,
    }


def test_shards_of_one_run_are_one_suite_run(project, ingest):
    """Two shards upload one suite under one run key: one run of it, its tests summed; a shard
    that fails a test the reference passes makes the run red (the gate fails)."""
    reference = ingest(xml("passed", "passed"), backend="cpu", commit="b" * 40, complete="true")
    assert reference.status_code == 202, reference.content
    for shard, outcome in (("1/2", "passed"), ("2/2", "failed")):
        response = ingest(
            xml(outcome, "passed"),
            backend="tpu",
            commit="a" * 40,
            run="nightly-tpu",
            suite="tpu-tests",
            shard=shard,
            complete="true" if shard == "2/2" else "false",
        )
        assert response.status_code == 202, response.content
    cell = cells(suite_matrix(project=project))[("tpu-tests", "tpu")]
    assert cell.status == "ran"
    assert (cell.last.uploads, cell.last.tests, cell.last.failed_tests) == (2, 4, 1)
    assert (cell.health.runs, cell.health.greens, cell.health.consecutive_greens) == (1, 0, 0)


def test_only_runs_that_may_be_current_count(project, ingest):
    """A pull request's run of a suite says nothing about the default branch's job."""
    send(ingest, "cpu", "default", 0, "passed", branch="feature")
    send(ingest, "cpu", "default", 1, "passed", probe="true")
    assert suite_matrix(project=project, now=NOW).rows == []


def test_the_stale_interval_is_the_suites_own(project, ingest):
    suite_save(project=project, name="weekly", stale_after_hours=24 * 8)
    send(ingest, "cpu", "weekly", 6, "passed")
    assert cells(suite_matrix(project=project, now=NOW))[("weekly", "cpu")].status == "ran"


def test_the_map_refuses_what_it_cannot_show(project):
    with pytest.raises(ValidationError, match="unknown backend"):
        suite_save(project=project, name="x", backends=[SuiteOnBackend(backend="ipu")])
    with pytest.raises(ValidationError, match="reason"):
        suite_save(
            project=project, name="x", backends=[SuiteOnBackend(backend="tpu", excluded=True)]
        )
    with pytest.raises(ValidationError, match="http"):
        suite_save(
            project=project,
            name="x",
            backends=[
                SuiteOnBackend(
                    backend="tpu", excluded=True, reason="r", issue_url="javascript:alert(1)"
                )
            ],
        )
    with pytest.raises(ValidationError, match="tier rules"):
        suite_save(project=project, name="x", tiers={"promote_after": 0})
    assert not Suite.objects.exists()
