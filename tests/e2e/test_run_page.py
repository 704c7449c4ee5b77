"""A run's page on the live stack: a CI upload through gunicorn, ingested by the Celery worker,
then its page, fetched over HTTP, lists exactly the gaps its verdict opened."""

import re
from html import unescape

import pytest

from parity.models import BackendState
from tests.e2e.expect import upload_settled
from tests.e2e.stack import wait_for
from tests.junit_builder import Case, junit_xml

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
FILE = "test/test_ops.py"


def report(outcomes: dict[str, tuple[str, str]]) -> bytes:
    return junit_xml(
        *(
            Case("TestOps", name, status, message, file=FILE)
            for name, (status, message) in outcomes.items()
        )
    )


def sent(http_api, live, backend: str, outcomes: dict, **fields) -> int:
    reply = http_api.post_upload(
        ("report.xml", report(outcomes)), backend=backend, complete="true", **fields
    )
    assert reply.status == 202, str(reply)
    body = upload_settled(http_api, reply.body["id"], seconds=60, live=live)
    assert body["status"] == "done", body
    return reply.body["run"]


def test_the_page_of_an_uploaded_run_lists_the_gaps_its_verdict_opened(http_api, live):
    passing = {f"test_{n}": ("passed", "") for n in range(6)}
    cpu = sent(http_api, live, "cpu", passing, run="cpu-1", timestamp="2026-04-01T12:00:00Z")
    wait_for(
        lambda: BackendState.objects.filter(backend__name="cpu", current_run_id=cpu).exists(),
        seconds=60,
        what="the reference's run to be current",
    )
    tpu = {
        **passing,
        "test_1": ("skipped", "needs 8 devices"),
        "test_4": ("failed", "AssertionError: 1 != 2"),
    }
    del tpu["test_5"]  # not run: missing, once the run is complete
    run = sent(
        http_api, live, "tpu", tpu, run="pr-7", branch="feature", timestamp="2026-04-02T12:00:00Z"
    )

    verdict = http_api.request("GET", f"/api/v1/runs/{run}/verdict/")
    page = http_api.request("GET", f"/p/pytorch-xla/runs/{run}/")

    assert (verdict.status, page.status) == (200, 200), (str(verdict), str(page))
    opened = {gap["test"]: gap["state"] for gap in verdict.body["gaps"]}
    assert opened == {
        f"{FILE}::TestOps::test_1": "skipped",
        f"{FILE}::TestOps::test_4": "failed",
        f"{FILE}::TestOps::test_5": "missing",
    }
    section = page.body.split('id="opened-gaps"', 1)[1].split("</section>", 1)[0]
    rows = re.findall(r'<tr data-test="([^"]+)" data-state="([^"]+)">', section)
    assert {unescape(test): state for test, state in rows} == opened
    assert len(rows) == len(opened)
