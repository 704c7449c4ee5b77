"""The project services: a project's rules are checked when written (its model's save() checks
nothing), and upload tokens record their last use to the minute: one write per token per minute,
however many uploads a CI run's shard jobs post with it."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from parity.models import BackendState, FileCell, Gap, Project, UploadToken
from parity.services.projects import (
    TOKEN_LAST_USED_RESOLUTION,
    ProjectSetupError,
    project_create,
    project_rules_update,
    project_save,
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


# --- What a project compares: its default branch and reference, rebuilt when they change -----


def open_gaps(project: Project) -> list[tuple[str, str, str]]:
    return sorted(
        Gap.objects.filter(project=project, closed_at__isnull=True).values_list(
            "backend__name", "test__key", "state"
        )
    )


def test_a_new_default_branch_brings_its_complete_runs_to_the_pages(runs_on_master):
    assert open_gaps(runs_on_master) == []  # the runs on master count for nothing yet
    assert not FileCell.objects.filter(project=runs_on_master).exists()

    runs_on_master.default_branch = "master"
    assert project_save(project=runs_on_master) is True

    assert open_gaps(runs_on_master) == [("tpu", "test/a.py::TestA::test_2", "failed")]
    cells = FileCell.objects.filter(project=runs_on_master, file="test/a.py")
    assert sorted(cells.values_list("backend__name", flat=True)) == ["cpu", "tpu"]


def test_a_new_reference_is_what_every_backend_is_held_to_at_once(runs_on_master):
    runs_on_master.default_branch = "master"
    project_save(project=runs_on_master)

    runs_on_master.reference_backend = runs_on_master.backends.get(name="tpu")
    assert project_save(project=runs_on_master) is True

    assert open_gaps(runs_on_master) == []  # cpu passes all tpu passes


def test_saving_what_did_not_change_rebuilds_nothing(runs_on_master):
    runs_on_master.name = "PyTorch/XLA"
    assert project_save(project=runs_on_master) is False
    assert Project.objects.get().name == "PyTorch/XLA"


def test_another_projects_backend_is_refused_as_reference(runs_on_master):
    other = project_create(slug="other", backends=["cpu"], reference="cpu")
    runs_on_master.reference_backend = other.backends.get()

    with pytest.raises(ProjectSetupError, match="'cpu' is not among cpu, gpu, neuron, tpu"):
        project_save(project=runs_on_master)
    assert Project.objects.get(slug="pytorch-xla").reference_backend.name == "cpu"


def test_a_default_branch_without_runs_leaves_no_page_showing_the_old_ones(runs_on_master, client):
    runs_on_master.default_branch = "master"
    project_save(project=runs_on_master)
    assert open_gaps(runs_on_master) == [("tpu", "test/a.py::TestA::test_2", "failed")]

    runs_on_master.default_branch = "main"  # and back: no complete run on main
    project_save(project=runs_on_master)

    assert open_gaps(runs_on_master) == []
    assert not FileCell.objects.filter(project=runs_on_master).exists()
    assert not BackendState.objects.filter(project=runs_on_master).exists()
    heatmap = client.get("/p/pytorch-xla/").content.decode()
    assert "2 complete runs on <code>master</code>" in heatmap
