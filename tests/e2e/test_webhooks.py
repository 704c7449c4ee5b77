"""Webhooks over the live stack: uploads through gunicorn, the Celery worker ingests and
recomputes, then its own delivery task posts the signed event to a receiver on 127.0.0.1."""

import pytest

from parity.models import Project, WebhookAttempt, WebhookEndpoint
from tests.e2e.conftest import STALE_SECONDS, stack_started
from tests.e2e.expect import upload_settled
from tests.junit_builder import Case, junit_xml
from tests.webhook_receiver import WebhookReceiver

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

FILE = "test/test_ops.py"
DELIVERED_SECONDS = 60


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory):
    """This module's stack (the e2e ``live`` fixture serves it): a failed delivery is retried
    a second later, not half a minute."""
    yield from stack_started(
        tmp_path_factory,
        {"PARITY_UPLOAD_STALE_SECONDS": str(STALE_SECONDS), "PARITY_WEBHOOK_RETRY_SECONDS": "1"},
    )


def upload(http_api, live, *, backend: str, **outcomes: str) -> int:
    cases = [Case("TestOps", n, o, f"{o} here", file=FILE) for n, o in outcomes.items()]
    reply = http_api.post_upload(
        ("report.xml", junit_xml(*cases)),
        backend=backend,
        commit="1" * 40,
        branch="main",
        run=f"night-{backend}",
        complete="true",
        timestamp="2026-06-01T12:00:00Z",
    )
    assert reply.status == 202, str(reply)
    assert upload_settled(http_api, reply.body["id"], seconds=60, live=live)["status"] == "done"
    return reply.body["run"]


def test_the_worker_delivers_a_signed_event_for_an_untracked_gap(http_api, live):
    with WebhookReceiver() as receiver:
        project = Project.objects.get(slug="pytorch-xla")
        hook = WebhookEndpoint.objects.create(project=project, url=receiver.url)
        receiver.secret = hook.secret
        receiver.script(500)  # the first attempt fails: the worker retries
        upload(http_api, live, backend="cpu", test_add="passed", test_lerp="passed")
        run = upload(http_api, live, backend="tpu", test_add="passed", test_lerp="skipped")
        got = receiver.wait_for(2, DELIVERED_SECONDS)
        assert [r.status for r in got] == [500, 200]
    assert all(r.verified for r in got), [r.why for r in got]
    data = got[1].body["data"]
    assert (data["run"]["id"], data["backend"], data["opened_total"]) == (run, "tpu", 1)
    assert data["opened"][0]["test"] == f"{FILE}::TestOps::test_lerp"
    log = list(WebhookAttempt.objects.filter(delivery__endpoint=hook).order_by("number"))
    assert [(a.number, a.status_code) for a in log] == [(1, 500), (2, 200)]
