"""What the runner integrations' tests read back: the JUnit a runner wrote, as parity's ingest
reads it, and the run it makes once uploaded to the live stack."""

import json
import time
from pathlib import Path

from ingest.junit import iter_cases
from ingest.normalize.ids import test_identity
from parity.models import BackendState
from tests.e2e.client import ApiClient
from tests.e2e.expect import upload_settled
from tests.e2e.stack import LiveStack

ISSUE_COMPLEX = "https://github.com/pytorch/xla/issues/9017"
ISSUE_FLAKY = "https://github.com/pytorch/xla/issues/8873"
RECOMPUTE_SECONDS = 60


def junit_outcomes(report: Path) -> dict[str, tuple[str, str | None]]:
    """Canonical test ID -> (outcome, message), by ingest's own parser and normalizer."""
    with report.open("rb") as stream:
        return {
            test_identity(
                classname=case.classname, name=case.name, file=case.file, folder_hint=None
            ).key: (case.outcome, case.message)
            for case in iter_cases(stream)
        }


def exempt(api: ApiClient, **triage: object) -> dict:
    """An exemption made through the triage API, as a maintainer makes one."""
    reply = api.request(
        "POST",
        "/api/v1/projects/pytorch-xla/triage/",
        body=json.dumps(triage).encode(),
        headers={"Content-Type": "application/json"},
    )
    assert reply.status == 201, str(reply)
    return reply.body


def upload_complete_run(
    api: ApiClient, live: LiveStack, report: Path, *, backend: str, day: str
) -> int:
    """Upload ``report`` as the complete run of ``backend`` on ``day``; return the run's id
    once it is ingested and, when it is its backend's current run, recomputed."""
    reply = api.post_upload(
        report,
        backend=backend,
        commit=f"{day.replace('-', '')}{backend}".ljust(40, "0"),
        branch="main",
        run=f"{day}-{backend}",
        complete="true",
        timestamp=f"{day}T12:00:00Z",
    )
    assert reply.status == 202, str(reply)
    upload = upload_settled(api, reply.body["id"], seconds=60, live=live)
    assert upload["status"] == "done", upload
    run_id = reply.body["run"]
    deadline = time.monotonic() + RECOMPUTE_SECONDS
    while not BackendState.objects.filter(backend__name=backend, current_run_id=run_id).exists():
        live.assert_worker_alive()
        assert time.monotonic() < deadline, f"run {run_id} not current after recompute"
        time.sleep(0.2)
    return run_id


def verdict(api: ApiClient, run_id: int) -> dict:
    reply = api.request("GET", f"/api/v1/runs/{run_id}/verdict/")
    assert reply.status == 200, str(reply)
    return reply.body
