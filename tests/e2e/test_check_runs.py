"""Check runs over the live stack: uploads through gunicorn, the Celery worker ingests and
recomputes, then its own task signs a JWT with the App's key file, exchanges it for an
installation token and posts the check run to a fake GitHub on 127.0.0.1."""

import pytest

from parity.models import Project
from tests.e2e.conftest import STALE_SECONDS, stack_started
from tests.e2e.expect import upload_settled
from tests.fake_github_app import FakeGitHubApp, key_pair
from tests.junit_builder import Case, junit_xml

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

FILE = "test/test_ops.py"
POSTED_SECONDS = 60
APP_ID = "4321"


@pytest.fixture(scope="module")
def github(tmp_path_factory):
    private, public = key_pair()
    key_file = tmp_path_factory.mktemp("github-app") / "app.pem"
    key_file.write_text(private, encoding="utf-8")
    with FakeGitHubApp(app_id=APP_ID, public_key=public, repos={"pytorch/xla"}) as fake:
        fake.key_file = key_file
        yield fake


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory, github):
    """This module's stack: the App configured with its key file and the fake GitHub's URL, a
    failed post retried a second later."""
    yield from stack_started(
        tmp_path_factory,
        {
            "PARITY_UPLOAD_STALE_SECONDS": str(STALE_SECONDS),
            "PARITY_GITHUB_APP_ID": APP_ID,
            "PARITY_GITHUB_APP_PRIVATE_KEY": str(github.key_file),
            "PARITY_TRACKER_API_URLS": f"github.com={github.api_url}",
            "PARITY_CHECK_RUN_RETRY_SECONDS": "1",
        },
    )


def upload(http_api, live, *, backend: str, commit: str, branch: str, **outcomes: str) -> int:
    cases = [Case("TestOps", n, o, f"{o} here", file=FILE) for n, o in outcomes.items()]
    reply = http_api.post_upload(
        ("report.xml", junit_xml(*cases)),
        backend=backend,
        commit=commit,
        branch=branch,
        run=f"{branch}-{backend}",
        complete="true",
        timestamp="2026-06-01T12:00:00Z",
    )
    assert reply.status == 202, str(reply)
    assert upload_settled(http_api, reply.body["id"], seconds=60, live=live)["status"] == "done"
    return reply.body["run"]


def test_the_worker_posts_a_check_run_on_a_fork_pull_requests_commit(http_api, live, github):
    Project.objects.filter(slug="pytorch-xla").update(
        issue_url_template="https://github.com/pytorch/xla/issues/{number}"
    )
    github.script(502)  # the first post fails: the worker posts again
    upload(
        http_api, live, backend="cpu", commit="1" * 40, branch="main", add="passed", lerp="passed"
    )
    [(repo, reference)] = github.wait_for(1, POSTED_SECONDS)
    assert (repo, reference["name"], reference["conclusion"]) == (
        "pytorch/xla",
        "parity: cpu",
        "success",
    )
    run = upload(
        http_api,
        live,
        backend="tpu",
        commit="2" * 40,
        branch="someone/xla:fix",
        add="passed",
        lerp="skipped",
    )
    _, check = github.wait_for(2, POSTED_SECONDS)[1]
    assert github.refused == []
    assert (check["name"], check["head_sha"], check["conclusion"]) == (
        "parity: tpu",
        "2" * 40,
        "failure",
    )
    assert check["details_url"].endswith(f"/p/pytorch-xla/runs/{run}/")
    assert f"`{FILE}::TestOps::lerp` skipped: skipped here" in check["output"]["text"]
    posts = [path for _, path in github.requests if path.endswith("/check-runs")]
    assert len(posts) == 3  # the 502 and its retry, then the pull request's
