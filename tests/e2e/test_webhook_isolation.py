"""A slow webhook receiver never delays another project's work, over the live stack (issue 48:
a receiver trickling a byte every few seconds held a worker process per delivery, and an
unrelated project's upload waited minutes behind them).

The stack routes deliveries to a queue of their own (``PARITY_QUEUE_WEBHOOKS``, as production's
settings do) with a worker of its own, as docker/compose.yml's ``worker-webhooks``; each attempt
ends by ``PARITY_WEBHOOK_TIMEOUT_SECONDS`` in all."""

import time
import uuid

import pytest

from parity.models import Project, WebhookEndpoint
from parity.services.projects import project_create, upload_token_create
from tests.e2e.client import ApiClient
from tests.e2e.conftest import STALE_SECONDS, stack_started
from tests.e2e.expect import upload_settled
from tests.junit_builder import Case, junit_xml
from tests.webhook_receiver import TricklingReceiver

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

FILE = "test/test_ops.py"
# Long enough that each trickled attempt holds its process through the other upload.
ATTEMPT_SECONDS = 40
# What the other project's upload may take: a second or two unloaded, on a busy 2-core host more.
UPLOAD_SECONDS = 15


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory):
    webhooks = f"parity-e2e-webhooks-{uuid.uuid4().hex[:8]}"
    env = {
        "PARITY_UPLOAD_STALE_SECONDS": str(STALE_SECONDS),
        "PARITY_QUEUE_WEBHOOKS": webhooks,
        "PARITY_WEBHOOK_TIMEOUT_SECONDS": str(ATTEMPT_SECONDS),
        "PARITY_WEBHOOK_RETRY_SECONDS": "600",  # a cut-off attempt is not retried in the test
    }
    for live in stack_started(tmp_path_factory, env):
        live.start_worker(webhooks)
        yield live


def upload(api: ApiClient, live, *, project: str, backend: str, **outcomes: str) -> dict:
    cases = [Case("TestOps", n, o, f"{o} here", file=FILE) for n, o in outcomes.items()]
    reply = api.post_upload(
        ("report.xml", junit_xml(*cases)),
        project=project,
        backend=backend,
        commit="1" * 40,
        branch="main",
        run=f"night-{backend}",
        complete="true",
        timestamp="2026-06-01T12:00:00Z",
    )
    assert reply.status == 202, str(reply)
    return upload_settled(api, reply.body["id"], seconds=60, live=live)


def test_a_trickling_receiver_does_not_delay_another_projects_upload(http_api, live):
    other = project_create(slug="other", backends=["cpu"], reference="cpu", visibility="public")
    other_api = ApiClient(base_url=live.base_url, token=upload_token_create(project=other))
    xla = Project.objects.get(slug="pytorch-xla")
    with TricklingReceiver(every=2.0) as slow:
        for _ in range(live.concurrency):  # as many slow endpoints as a worker has processes
            WebhookEndpoint.objects.create(project=xla, url=slow.url())
        upload(http_api, live, project="pytorch-xla", backend="cpu", test_a="passed")
        upload(http_api, live, project="pytorch-xla", backend="tpu", test_a="skipped")
        deadline = time.monotonic() + 60
        while slow.connections < live.concurrency and time.monotonic() < deadline:
            time.sleep(0.1)
        assert slow.connections == live.concurrency  # both deliveries are being trickled

        started = time.monotonic()
        done = upload(other_api, live, project="other", backend="cpu", test_a="passed")
        seconds = time.monotonic() - started
        assert slow.connections == live.concurrency and slow.bytes_sent < 30  # still held
    assert done["status"] == "done"
    assert seconds < UPLOAD_SECONDS, f"the other project's upload took {seconds:.1f} s"
