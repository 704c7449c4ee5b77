"""Probe runs (exempted tests run too), through the upload API: the exemptions whose tests all
pass in the backend's latest probe are flagged "passes now" (in the manifest CI reads), the
others say how their tests did; a probe never becomes current and moves no number or gap."""

import pytest

from parity.models import (
    BackendState,
    CurrentOutcome,
    FileCell,
    Gap,
    ProbeOutcome,
    Run,
    Snapshot,
)
from tests.parity.conftest import commit_of, run_xml
from tests.parity.engine.rows import gap_history

URL = "/api/v1/projects/pytorch-xla"
OPS = "test/test_ops.py::TestOps::"
VIEW = "test/test_view_ops.py::TestViewOps::"
ISSUE = "https://github.com/pytorch/xla/issues/"
REFERENCE = {
    f"{OPS}test_add_complex64": "passed",
    f"{OPS}test_mul_complex64": "passed",
    f"{OPS}test_add_float32": "passed",
    f"{VIEW}test_view_float32": "passed",
    f"{VIEW}test_view_int8": "passed",
}
EXEMPTED = ("skipped", "Exempted: a known issue")
TPU = {
    f"{OPS}test_add_complex64": EXEMPTED,
    f"{OPS}test_mul_complex64": EXEMPTED,
    f"{OPS}test_add_float32": "passed",
    f"{VIEW}test_view_float32": EXEMPTED,
    f"{VIEW}test_view_int8": EXEMPTED,
}
# The weekly probe: the complex64 tests pass now; the view file still fails one test.
PROBE = {
    f"{OPS}test_add_complex64": "passed",
    f"{OPS}test_mul_complex64": "passed",
    f"{OPS}test_add_float32": "passed",
    f"{VIEW}test_view_float32": "passed",
    f"{VIEW}test_view_int8": ("failed", "AssertionError: int8 views differ"),
}


@pytest.fixture
def exempted(upload_run, api):
    """CPU (the reference) and TPU ran; three exemptions apply on TPU: a glob over the
    complex64 tests, the view file, and a test of a file nobody runs."""
    upload_run("cpu", REFERENCE, day="2026-04-01")
    upload_run("tpu", TPU, day="2026-04-01")
    made = {
        "complex": exempt(api, match=f"{OPS}test_*_complex64", issue_url=f"{ISSUE}1"),
        "views": exempt(api, match="test/test_view_ops.py", issue_url=f"{ISSUE}2"),
        "gone": exempt(api, match="test/test_gone.py", issue_url=f"{ISSUE}3"),
    }
    return made


def exempt(api, **body) -> int:
    body = {"kind": "tracked", "backends": ["tpu"], **body}
    response = api.post(f"{URL}/triage/", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


@pytest.fixture
def probe(ingest):
    def _probe(cases: dict, *, day: str, key: str | None = None, **fields) -> int:
        response = ingest(
            ("probe.xml", run_xml(cases)),
            backend="tpu",
            commit=commit_of(day, "master"),
            branch="master",
            run=key or f"{day}-probe-tpu",
            complete="true",
            timestamp=f"{day}T12:00:00Z",
            probe="true",
            **fields,
        )
        assert response.status_code in (200, 202), response.content
        return response.json()["run"]

    return _probe


def roll_ups() -> dict:
    """Everything a parity number or a gap is read from."""
    return {
        "state": list(BackendState.objects.values_list("backend_id", "current_run_id")),
        "current": sorted(CurrentOutcome.objects.values_list("backend_id", "test_id", "outcome")),
        "gaps": sorted(
            Gap.objects.values_list("backend_id", "test_id", "state", "is_open", "tracked")
        ),
        "history": gap_history(),
        "snapshots": sorted(Snapshot.objects.values_list("backend_id", "run_id", "score")),
        "cells": sorted(FileCell.objects.values_list("backend_id", "file", "passed", "missing")),
    }


def test_an_exemption_whose_tests_pass_in_a_probe_passes_now(exempted, probe, api):
    run = probe(PROBE, day="2026-04-05")

    outcomes = {p.triage_id: p for p in ProbeOutcome.objects.filter(backend__name="tpu")}
    complex64, views, gone = (
        outcomes[exempted["complex"]],
        outcomes[exempted["views"]],
        outcomes[exempted["gone"]],
    )
    assert (complex64.run_id, complex64.tests, complex64.passed) == (run, 2, 2)
    assert complex64.passes_now and complex64.outcome == "passed"
    assert (views.tests, views.passed, views.failed, views.outcome) == (2, 1, 1, "failed")
    assert not views.passes_now
    assert (gone.tests, gone.outcome) == (0, "not_run")  # none of its tests reported

    manifest = api.get(f"{URL}/manifest/?backend=tpu").json()
    assert {e["id"]: e["passes_now"] for e in manifest["exemptions"]} == {
        exempted["complex"]: True,
        exempted["views"]: False,
        exempted["gone"]: False,
    }
    # Not on another backend: no probe ran there.
    gpu = api.get(f"{URL}/manifest/?backend=gpu").json()
    assert not any(e["passes_now"] for e in gpu["exemptions"])


def test_a_probe_run_changes_no_parity_number_and_no_gap(exempted, probe, api, upload_run):
    before = roll_ups()
    parity_before = api.get(f"{URL}/parity/").json()

    probe(PROBE, day="2026-04-05")

    assert roll_ups() == before
    assert api.get(f"{URL}/parity/").json() == parity_before
    tpu_state = BackendState.objects.get(backend__name="tpu")
    assert Run.objects.get(pk=tpu_state.current_run_id).probe is False
    # The next plain run is current as ever, though older than the probe.
    later = upload_run("tpu", TPU, day="2026-04-03")
    assert BackendState.objects.get(backend__name="tpu").current_run_id == later


def test_an_older_probe_completing_late_does_not_replace_the_latest(exempted, probe):
    probe(PROBE, day="2026-04-05")
    still_failing = {**PROBE, f"{OPS}test_mul_complex64": ("error", "Fatal Python error")}

    probe(still_failing, day="2026-04-04")

    complex64 = ProbeOutcome.objects.get(triage_id=exempted["complex"])
    assert complex64.passes_now and str(complex64.at.date()) == "2026-04-05"


def test_an_errored_probe_says_so(exempted, probe):
    crashed = {**PROBE, f"{OPS}test_mul_complex64": ("error", "Fatal Python error: Aborted")}

    probe(crashed, day="2026-04-05")

    complex64 = ProbeOutcome.objects.get(triage_id=exempted["complex"])
    assert (complex64.passes_now, complex64.outcome, complex64.error) == (False, "error", 1)


def test_a_shard_cannot_turn_a_run_into_a_probe(exempted, ingest):
    fields = {"backend": "tpu", "commit": "a" * 40, "run": "nightly-7", "complete": "false"}
    assert ingest(("a.xml", run_xml(TPU)), **fields).status_code == 202

    refused = ingest(("b.xml", run_xml(PROBE)), probe="true", **fields)

    assert refused.status_code == 400
    assert "is not a probe run" in refused.json()["detail"]
