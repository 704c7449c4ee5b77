"""The project services: a project's rules are checked when written (its model's save() checks
nothing), and upload tokens record their last use to the minute: one write per token per minute,
however many uploads a CI run's shard jobs post with it."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from parity.models import Project, UploadToken
from parity.services.projects import (
    TOKEN_LAST_USED_RESOLUTION,
    ProjectSetupError,
    project_create,
    project_rules_update,
    upload_token_used,
)
from tests.conftest import FIXTURES_DIR
from tests.uploads import post_upload

PYTEST_SMALL = FIXTURES_DIR / "junit" / "pytest_small.xml"


@pytest.fixture
def stored(token) -> UploadToken:
    return UploadToken.objects.get()


def test_a_token_never_used_records_its_first_use(stored, django_assert_num_queries):
    before = timezone.now()
    with django_assert_num_queries(1):
        upload_token_used(token=stored)
    stored.refresh_from_db()
    assert stored.last_used_at >= before


def test_a_use_within_the_minute_writes_nothing(stored, django_assert_num_queries):
    upload_token_used(token=stored)
    again = UploadToken.objects.get()
    with django_assert_num_queries(0):
        upload_token_used(token=again)
    assert UploadToken.objects.get().last_used_at == stored.last_used_at


def test_a_use_a_minute_later_is_recorded(stored):
    old = timezone.now() - TOKEN_LAST_USED_RESOLUTION - timedelta(seconds=1)
    UploadToken.objects.filter(pk=stored.pk).update(last_used_at=old)
    upload_token_used(token=UploadToken.objects.get())
    assert UploadToken.objects.get().last_used_at > old + TOKEN_LAST_USED_RESOLUTION


def test_uploads_through_the_api_record_the_token_use(stored, api):
    assert stored.last_used_at is None
    response = post_upload(api, PYTEST_SMALL, commit="a" * 40, backend="tpu")
    assert response.status_code == 202, response.content
    assert UploadToken.objects.get().last_used_at is not None


def test_a_bad_regex_is_refused_when_written_with_its_field_named(project):
    bad = {"rewrites": [{"pattern": "test_(", "replacement": "x"}]}

    with pytest.raises(ValidationError) as raised:
        project_rules_update(project=project, rules=bad)

    assert "rewrites[0].pattern" in str(raised.value)
    assert project.normalization_rules == {}  # the caller's object too
    project.refresh_from_db()
    assert project.normalization_rules == {}


def test_good_rules_are_stored(project):
    rules = {"rewrites": [{"pattern": "test_old", "replacement": "test_new"}]}

    project_rules_update(project=project, rules=rules)

    project.refresh_from_db()
    assert project.normalization_rules == rules


def test_a_project_with_a_bad_issue_url_template_is_not_created(db):
    with pytest.raises(ProjectSetupError, match="number"):
        project_create(
            slug="x", backends=["cpu"], reference="cpu", issue_url_template="https://x/issues"
        )
    assert not Project.objects.filter(slug="x").exists()
