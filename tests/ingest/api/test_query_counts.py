"""The upload API's query counts, per request (the ingest task it queues runs later, in the
worker, and is not counted here): storing an upload costs the same however many runs and
uploads the project already has; reading one is three queries."""

import pytest

from tests.conftest import FIXTURES_DIR
from tests.uploads import post_upload

PYTEST_SMALL = FIXTURES_DIR / "junit" / "pytest_small.xml"

# The token with its project (its last use was written by the upload before, under a minute
# ago); the backend; in a transaction (savepoints: 6 statements): the run (get or create), the
# upload (get or create), its file.
UPLOAD_CREATE = 13
UPLOAD_DETAIL = 2  # the token; the upload
# The token; the run; marking it complete (its recompute is queued); whether an upload of it
# names a suite (then its suites' summaries are queued too).
RUN_COMPLETE = 4


@pytest.fixture
def earlier(ingest) -> None:
    """History: a few runs already ingested."""
    for n in range(3):
        ingest(PYTEST_SMALL, commit=f"{n}" * 40, backend="tpu", complete="true")


def test_upload_create_and_detail(
    earlier, api, django_assert_num_queries, django_capture_on_commit_callbacks
):
    # The ingest task queued on commit is the worker's: not run, not counted.
    with (
        django_capture_on_commit_callbacks(execute=False),
        django_assert_num_queries(UPLOAD_CREATE),
    ):
        created = post_upload(api, PYTEST_SMALL, commit="f" * 40, backend="tpu")
    assert created.status_code == 202, created.content
    with django_assert_num_queries(UPLOAD_DETAIL):
        assert api.get(created.json()["url"]).status_code == 200


def test_run_complete(
    earlier, api, ingest, django_assert_num_queries, django_capture_on_commit_callbacks
):
    shard = ingest(PYTEST_SMALL, commit="e" * 40, backend="tpu", complete="false")
    run = shard.json()["run"]
    with (
        django_capture_on_commit_callbacks(execute=False),
        django_assert_num_queries(RUN_COMPLETE),
    ):
        response = api.post(f"/api/v1/runs/{run}/complete/")
    assert response.status_code == 200, response.content
