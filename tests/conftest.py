from pathlib import Path

import pytest
from rest_framework.test import APIClient

from parity.models import Project
from parity.services.projects import project_create, upload_token_create

FIXTURES_DIR = Path(__file__).parent / "fixtures"


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture(autouse=True)
def _cache_reset():
    """Rate-limit counters live in the (local-memory) cache: each test starts with none."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


def _eager_task_errors(*, propagate: bool):
    from parity.celery import app

    previous = app.conf.task_eager_propagates
    app.conf.task_eager_propagates = propagate
    yield
    app.conf.task_eager_propagates = previous


@pytest.fixture
def eager_errors_propagate():
    """Eager Celery swallows task exceptions by default; a crashing task must fail the test."""
    yield from _eager_task_errors(propagate=True)


@pytest.fixture
def eager_errors_swallowed():
    """As a worker does: one failed task does not stop the loop that queued it."""
    yield from _eager_task_errors(propagate=False)


@pytest.fixture
def project(db) -> Project:
    return project_create(
        slug="pytorch-xla",
        backends=["cpu", "gpu", "tpu", "neuron"],
        reference="cpu",
        issue_url_template="https://github.com/pytorch/xla/issues/{number}",
        visibility="public",  # like the demo; tests of private projects make their own
    )


@pytest.fixture
def token(project) -> str:
    return upload_token_create(project=project)


@pytest.fixture
def api(token) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


@pytest.fixture
def ingest(api, django_capture_on_commit_callbacks):
    """Post files through the upload API and run the queued ingest task, as eager Celery does
    after the request's transaction commits."""
    from tests.uploads import post_upload

    def _ingest(*files, **fields):
        with django_capture_on_commit_callbacks(execute=True):
            return post_upload(api, *files, **fields)

    return _ingest


@pytest.fixture
def fake_tracker(settings):
    """A local fake GitHub (github.com) and GitLab (gitlab.example.com) with read tokens set
    (``tests/fake_tracker.py``); the settings point the adapters at it."""
    from tests.fake_tracker import FakeTracker

    with FakeTracker() as fake:
        settings.PARITY_TRACKER_API_URLS = {
            "github.com": fake.github_api,
            "gitlab.example.com": fake.gitlab_api,
        }
        settings.PARITY_TRACKER_TOKENS = {
            "github.com": fake.token,
            "gitlab.example.com": fake.token,
        }
        settings.PARITY_TRACKER_WRITE_TOKENS = {}
        yield fake
