"""Upload tokens record their last use to the minute: one write per token per minute, however
many uploads a CI run's shard jobs post with it."""

from datetime import timedelta

import pytest
from django.utils import timezone

from parity.models import UploadToken
from parity.services.projects import TOKEN_LAST_USED_RESOLUTION, upload_token_used
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
