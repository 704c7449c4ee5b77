"""The suite map in the admin: an exclusion needs a reason, its issue URL must be http(s), and
a suite's rows name its own project's backends (docs/suites.md)."""

import pytest

from parity.models import Backend, Suite, SuiteBackend
from parity.services.projects import project_create

pytestmark = pytest.mark.django_db


def form(project, backend, **row):
    data = {
        "project": project.pk,
        "name": "torch_ops",
        "stale_after_hours": 48,
        "promote_after": 5,
        "demote_after": 3,
        "recover_after": 3,
        "backends-TOTAL_FORMS": 1,
        "backends-INITIAL_FORMS": 0,
        "backends-0-backend": backend.pk,
        "backends-0-name": "",
        "backends-0-reason": "",
        "backends-0-issue_url": "",
    }
    data.update({f"backends-0-{k}": v for k, v in row.items()})
    return data


def test_an_exclusion_with_a_reason_and_an_issue_is_saved(admin_client, project):
    neuron = Backend.objects.get(project=project, name="neuron")
    issue = "https://github.com/pytorch/xla/issues/9577"
    data = form(project, neuron, excluded="on", reason="never called", issue_url=issue)

    response = admin_client.post("/admin/parity/suite/add/", data)

    assert response.status_code == 302, response.context["inline_admin_formsets"][0].formset.errors
    row = SuiteBackend.objects.get()
    assert (row.suite.name, row.excluded, row.reason, row.issue_url) == (
        "torch_ops", True, "never called", issue
    )  # fmt: skip


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"excluded": "on"}, "reason"),
        ({"excluded": "on", "reason": "r", "issue_url": "javascript:alert(1)"}, "issue_url"),
    ],
)
def test_the_admin_refuses_an_exclusion_it_could_not_show(admin_client, project, row, field):
    neuron = Backend.objects.get(project=project, name="neuron")

    response = admin_client.post("/admin/parity/suite/add/", form(project, neuron, **row))

    assert response.status_code == 200
    errors = response.context["inline_admin_formsets"][0].formset.errors
    assert field in errors[0]
    assert not Suite.objects.exists()


def test_a_suite_names_only_its_projects_backends(admin_client, project):
    other = project_create(slug="other", backends=["cpu"], reference="cpu")
    stranger = Backend.objects.get(project=other)

    response = admin_client.post("/admin/parity/suite/add/", form(project, stranger))

    assert response.status_code == 200
    assert not Suite.objects.exists()
