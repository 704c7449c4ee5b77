"""PyTorch core's ``hw_classification`` through the pytest plugin, the served client and the live
stack: a GENERIC class, which the accelerator's run never generates, reads *not applicable*
there, not missing, and the tests it covers leave the score and the gap list."""

import shutil
import time

import pytest

from parity.models import BackendState, Run, Triage
from parity.services.triage import declaration_override
from tests.parity.clients.conftest import CLIENTS_DIR, FIXTURES_DIR

pytest_plugins = ["pytester"]

SHAPES = "test/test_shapes.py::TestShapes::"


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_a_generic_class_the_accelerator_never_runs_reads_not_applicable(
    pytester, monkeypatch, live, http_api, parity_ci_run
):
    shutil.copytree(FIXTURES_DIR / "generic_suite", pytester.path, dirs_exist_ok=True)
    monkeypatch.setenv("PYTHONPATH", str(CLIENTS_DIR))
    monkeypatch.setenv("PARITY_URL", live.base_url)
    monkeypatch.setenv("PARITY_TOKEN", http_api.token)
    monkeypatch.setenv("PARITY_PROJECT", "pytorch-xla")

    def run(device: str):
        monkeypatch.setenv("SUITE_DEVICE", device)
        return pytester.runpytest_subprocess(
            *("-p", "no:django", "-p", "no:cacheprovider", "-p", "parity_pytest"),
            *("--parity-backend", device, f"--junitxml={device}.xml"),
        )

    def upload(device: str, commit: str) -> None:
        # As CI does: the served client reads the report's properties and sends them.
        done = parity_ci_run(
            *("upload", str(pytester.path / f"{device}.xml"), "--backend", device),
            *("--complete", "--commit", commit, "--branch", "main", "--wait"),
        )
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
        run_id = Run.objects.get(backend__name=device, commit=commit).pk
        deadline = time.monotonic() + 60
        while not BackendState.objects.filter(current_run_id=run_id).exists():
            assert time.monotonic() < deadline, f"run {run_id} never became current"
            time.sleep(0.2)

    run("cpu").assert_outcomes(passed=4)
    report = (pytester.path / "cpu.xml").read_text()
    # The plugin read the classes' attribute at collection and wrote it for the client.
    assert 'name="parity_hw_classification"' in report
    upload("cpu", "a" * 40)
    run("tpu").assert_outcomes(passed=1, failed=1)
    upload("tpu", "b" * 40)

    declared = Triage.objects.get(source="hw_classification")
    assert declared.kind == "not_applicable"
    assert declared.match == "test/test_shapes.py::TestShapes::*"
    gaps = http_api.request("GET", "/api/v1/projects/pytorch-xla/gaps/?backend=tpu").body
    assert [g["test"] for g in gaps["results"]] == ["test/test_shapes.py::TestKernels::test_matmul"]
    parity = http_api.request("GET", "/api/v1/projects/pytorch-xla/parity/").body
    tpu = next(b for b in parity["backends"] if b["backend"] == "tpu")
    # Of the 4 tests the CPU passes, 2 are not applicable on the TPU: 1 of the other 2 passes.
    assert (tpu["not_applicable"], tpu["reference_passing"], tpu["passing"]) == (2, 2, 1)
    assert tpu["score"] == 0.5 and tpu["score_raw"] == 0.25
    assert tpu["gaps"]["missing"] == 0

    # A maintainer who disputes the label overrides it: the tests are gaps again.
    declaration_override(triage=declared, overridden=True)
    parity = http_api.request("GET", "/api/v1/projects/pytorch-xla/parity/").body
    tpu = next(b for b in parity["backends"] if b["backend"] == "tpu")
    assert (tpu["not_applicable"], tpu["gaps"]["missing"], tpu["score"]) == (0, 2, 0.25)
