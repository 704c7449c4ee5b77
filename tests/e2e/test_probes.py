"""A probe run over the live stack: uploaded through gunicorn with ``probe=true``, ingested
and recorded by the Celery worker, it flags the exemption whose test passes now in the manifest
CI reads, and moves no parity number."""

import json
import time

import pytest

from parity.models import ProbeOutcome
from tests.e2e.expect import upload_settled
from tests.junit_builder import Case, junit_xml

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PROJECT = "/api/v1/projects/pytorch-xla"
FILE = "test/test_ops.py"
RECORDED_SECONDS = 60


def report(**outcomes: str) -> tuple[str, bytes]:
    cases = [
        Case("TestOps", name, outcome, f"{outcome} here", file=FILE)
        for name, outcome in outcomes.items()
    ]
    return ("report.xml", junit_xml(*cases))


def upload(http_api, live, *, backend: str, day: str, files, **fields) -> int:
    reply = http_api.post_upload(
        files,
        backend=backend,
        commit=day.replace("-", "").ljust(40, "0"),
        branch="main",
        run=f"{day}-{backend}-{fields.get('probe', 'plain')}",
        complete="true",
        timestamp=f"{day}T12:00:00Z",
        **fields,
    )
    assert reply.status == 202, str(reply)
    assert upload_settled(http_api, reply.body["id"], seconds=60, live=live)["status"] == "done"
    return reply.body["run"]


def get(http_api, path: str):
    reply = http_api.request("GET", f"{PROJECT}/{path}")
    assert reply.status == 200, str(reply)
    return reply.body


def test_a_probe_upload_flags_the_exemption_whose_tests_pass_now(http_api, live):
    upload(http_api, live, backend="cpu", day="2026-06-01",
           files=report(test_add="passed", test_lerp="passed"))  # fmt: skip
    upload(http_api, live, backend="tpu", day="2026-06-01",
           files=report(test_add="passed", test_lerp="skipped"))  # fmt: skip
    exemption = http_api.request(
        "POST",
        f"{PROJECT}/triage/",
        body=json.dumps(
            {"match": f"{FILE}::TestOps::test_lerp", "kind": "intended", "backends": ["tpu"],
             "note": "no lerp kernel on TPU"}
        ).encode(),
        headers={"Content-Type": "application/json"},
    )  # fmt: skip
    assert exemption.status == 201, str(exemption)
    parity = get(http_api, "parity/")

    probe = upload(http_api, live, backend="tpu", day="2026-06-07", probe="true",
                   files=report(test_add="passed", test_lerp="passed"))  # fmt: skip

    deadline = time.monotonic() + RECORDED_SECONDS
    while not ProbeOutcome.objects.filter(run_id=probe).exists():
        live.assert_worker_alive()
        assert time.monotonic() < deadline, f"probe run {probe} not recorded by the worker"
        time.sleep(0.2)
    manifest = get(http_api, "manifest/?backend=tpu")
    assert [(e["id"], e["passes_now"]) for e in manifest["exemptions"]] == [
        (exemption.body["id"], True)
    ]
    assert get(http_api, "parity/") == parity  # the probe is no current run
