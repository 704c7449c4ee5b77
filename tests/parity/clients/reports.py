"""What the runner integrations' tests share: the exemptions they make on the live stack, the
JUnit a runner wrote as parity's ingest reads it, the run it makes once uploaded, and a server
that cannot be reached."""

import json
import socket
import time
from pathlib import Path

from parity.models import BackendState
from parity.pure.junit import iter_cases
from parity.pure.normalize.ids import test_identity
from tests.e2e.client import ApiClient
from tests.e2e.expect import upload_settled
from tests.e2e.stack import LiveStack

ISSUE_COMPLEX = "https://github.com/pytorch/xla/issues/9017"
ISSUE_FLAKY = "https://github.com/pytorch/xla/issues/8873"
COMPLEX_NOTE = "XLA has no complex64"
FLAKY_NOTE = "all_reduce misses its deadline now and then"
MESH_NOTE = "A single-host TPU has no 2x4 mesh"
# The skip messages the server hands the runners: "<reason> (<issue URL>)".
COMPLEX_MESSAGE = f"{COMPLEX_NOTE} ({ISSUE_COMPLEX})"
FLAKY_MESSAGE = f"{FLAKY_NOTE} ({ISSUE_FLAKY})"
MESH_MESSAGE = MESH_NOTE
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


def tpu_exemptions(api: ApiClient, *, complex64: str, flaky: str, mesh: str) -> None:
    """The suites' exemptions on TPU, made through the triage API as a maintainer makes them:
    the ``complex64`` pattern tracked, ``flaky`` quarantined, ``mesh`` intended."""
    exemptions = [
        {"match": complex64, "kind": "tracked", "note": COMPLEX_NOTE, "issue_url": ISSUE_COMPLEX},
        {"match": flaky, "kind": "quarantine", "note": FLAKY_NOTE, "issue_url": ISSUE_FLAKY},
        {"match": mesh, "kind": "intended", "note": MESH_NOTE},
    ]
    for exemption in exemptions:
        reply = api.request(
            "POST",
            "/api/v1/projects/pytorch-xla/triage/",
            body=json.dumps({**exemption, "backends": ["tpu"]}).encode(),
            headers={"Content-Type": "application/json"},
        )
        assert reply.status == 201, str(reply)


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


def unreachable_settings() -> dict[str, str]:
    """Client settings naming a local port nothing listens on (bound, then released)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
    return {
        "PARITY_URL": f"http://127.0.0.1:{port}",
        "PARITY_TOKEN": "t",
        "PARITY_PROJECT": "pytorch-xla",
    }
