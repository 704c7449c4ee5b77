"""A compare view on the live stack: runs uploaded through gunicorn and ingested by the Celery
worker compute the view again in a task of its own after their recompute, debounced: the first
run past the interval is read at once; the runs right after it wait for one refresh queued for
when the interval has passed (a task with an ETA on the broker), which reads them all. The page,
fetched over HTTP, then shows the kept counts."""

import datetime

import pytest
from django.utils import timezone

from parity.models import Backend, CompareRow, CompareView, Project
from parity.services.compare_views import CompareRequest, compare_view_create
from tests.e2e.conftest import STALE_SECONDS, stack_started
from tests.e2e.expect import upload_settled
from tests.e2e.stack import wait_for
from tests.junit_builder import Case, junit_xml

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
INTERVAL = 4  # PARITY_COMPARE_REFRESH_SECONDS of this module's stack
TEST = "test/test_ops.py::TestOps::test_add"


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory):
    yield from stack_started(
        tmp_path_factory,
        {
            "PARITY_UPLOAD_STALE_SECONDS": str(STALE_SECONDS),
            "PARITY_COMPARE_REFRESH_SECONDS": str(INTERVAL),
        },
    )


def sent(http_api, live, backend: str, status: str, n: int) -> None:
    at = (timezone.now() - datetime.timedelta(hours=10 - n)).strftime("%Y-%m-%dT%H:%M:%SZ")
    report = junit_xml(Case("TestOps", "test_add", status, "boom", file="test/test_ops.py"))
    reply = http_api.post_upload(
        ("report.xml", report),
        backend=backend,
        commit=f"{n:040d}",
        run=f"{backend}-{n}",
        complete="true",
        timestamp=at,
    )
    assert reply.status == 202, str(reply)
    assert upload_settled(http_api, reply.body["id"], seconds=60, live=live)["status"] == "done"


def kept(view: CompareView) -> tuple[int, int]:
    row = CompareRow.objects.filter(view=view, test__key=TEST).first()
    return (row.sample_passed, row.sample_failed) if row else (0, 0)


def test_runs_compute_the_view_in_a_task_debounced(http_api, live, project: Project):
    sent(http_api, live, "cpu", "passed", 0)
    view = compare_view_create(
        project=project,
        request=CompareRequest(
            name="tpu-vs-cpu",
            sample=Backend.objects.get(project=project, name="tpu"),
            basis=Backend.objects.get(project=project, name="cpu"),
        ),
    )
    # Computed on save, long enough ago that the next run is read at once.
    CompareView.objects.filter(pk=view.pk).update(
        computed_at=timezone.now() - datetime.timedelta(seconds=INTERVAL * 2)
    )
    sent(http_api, live, "tpu", "failed", 1)
    wait_for(lambda: kept(view) == (0, 1), seconds=60, what="the first run's refresh")
    first = CompareView.objects.get(pk=view.pk).computed_at

    # Two more right after: inside the interval, they wait for one queued refresh.
    sent(http_api, live, "tpu", "failed", 2)
    sent(http_api, live, "tpu", "passed", 3)
    wait_for(lambda: kept(view) == (1, 2), seconds=60, what="the queued refresh")
    again = CompareView.objects.get(pk=view.pk)
    assert again.computed_at - first >= datetime.timedelta(seconds=INTERVAL - 1)
    assert again.refresh_due_at is None and again.sample_runs == 3

    page = http_api.request("GET", "/p/pytorch-xla/compare/tpu-vs-cpu/")
    assert page.status == 200 and "1/3" in page.body, str(page)
