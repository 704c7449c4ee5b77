"""The admin's project pages: a backend's command template is checked before it is saved; a
new default branch or reference rebuilds the project's parity; a backend stays in its
project."""

import json

from parity.engine import project_recompute
from parity.models import Backend, Gap, Project
from parity.services.projects import project_create


def backend_form(backend: Backend, command: str) -> dict:
    return {
        "project": backend.project_id,
        "name": backend.name,
        "aliases": "[]",
        "reproduce_command": command,
    }


def test_a_backends_command_template_is_saved_from_its_admin_form(admin_client, project):
    tpu = project.backends.get(name="tpu")
    command = "PJRT_DEVICE=TPU python3 {file} {class}.{name}"

    response = admin_client.post(
        f"/admin/parity/backend/{tpu.pk}/change/", backend_form(tpu, command)
    )

    assert response.status_code == 302, response.context["adminform"].form.errors
    tpu.refresh_from_db()
    assert tpu.reproduce_command == command


def test_an_unknown_placeholder_is_refused_and_named(admin_client, project):
    tpu = project.backends.get(name="tpu")
    form = backend_form(tpu, "python3 {path} {class}.{name}")

    response = admin_client.post(f"/admin/parity/backend/{tpu.pk}/change/", form)

    assert response.status_code == 200
    assert response.context["adminform"].form.errors["reproduce_command"] == [
        "Unknown placeholder {path}: use {file}, {class}, {name}, {nodeid}."
    ]
    tpu.refresh_from_db()
    assert tpu.reproduce_command == ""


def test_the_project_page_edits_its_backends_commands(admin_client, project):
    response = admin_client.get(f"/admin/parity/project/{project.pk}/change/")

    assert response.status_code == 200
    assert 'name="backends-0-reproduce_command"' in response.content.decode()


def project_form(project, **changes) -> dict:
    """The project's change form as the admin renders it, its backends inline, with
    ``changes``."""
    backends = list(project.backends.order_by("pk"))
    form = {
        "slug": project.slug,
        "name": project.name,
        "reference_backend": project.reference_backend_id,
        "issue_url_template": project.issue_url_template,
        "default_branch": project.default_branch,
        "normalization_rules": "{}",
        "new_issue_labels": "[]",
        "visibility": project.visibility,
        "variant_keys": json.dumps(project.variant_keys),
        "score_definition": project.score_definition,
        "truncation_percent": project.truncation_percent,
        "backends-TOTAL_FORMS": len(backends),
        "backends-INITIAL_FORMS": len(backends),
        "memberships-TOTAL_FORMS": 0,
        "memberships-INITIAL_FORMS": 0,
    }
    for n, backend in enumerate(backends):
        form.update(
            {
                f"backends-{n}-id": backend.pk,
                f"backends-{n}-project": project.pk,
                f"backends-{n}-name": backend.name,
                f"backends-{n}-aliases": "[]",
                f"backends-{n}-reproduce_command": "",
            }
        )
    return {**form, **changes}


def test_changing_the_default_branch_in_the_admin_rebuilds_parity(admin_client, runs_on_master):
    url = f"/admin/parity/project/{runs_on_master.pk}/change/"
    assert not Gap.objects.exists()  # the complete runs on master count for nothing yet

    response = admin_client.post(url, project_form(runs_on_master, default_branch="master"))

    assert response.status_code == 302, response.context["adminform"].form.errors
    gap = Gap.objects.get()
    assert (gap.backend.name, gap.test.key, gap.state) == (
        "tpu",
        "test/a.py::TestA::test_2",
        "failed",
    )
    page = admin_client.get(response.url).content.decode()
    assert "Parity of pytorch-xla was rebuilt from its runs on master, against cpu." in page


def test_changing_the_reference_in_the_admin_rebuilds_parity(admin_client, runs_on_master):
    Project.objects.filter(pk=runs_on_master.pk).update(default_branch="master")
    project_recompute(project=runs_on_master)
    assert Gap.objects.filter(closed_at__isnull=True).count() == 1  # tpu's failure against cpu
    runs_on_master.refresh_from_db()
    tpu = runs_on_master.backends.get(name="tpu")
    url = f"/admin/parity/project/{runs_on_master.pk}/change/"

    response = admin_client.post(url, project_form(runs_on_master, reference_backend=tpu.pk))

    assert response.status_code == 302, response.context["adminform"].form.errors
    assert not Gap.objects.filter(closed_at__isnull=True).exists()  # cpu passes all tpu does


def test_a_backend_stays_in_its_project(admin_client, project):
    other = project_create(slug="other", backends=["cpu"], reference="cpu")
    tpu = project.backends.get(name="tpu")

    form = {**backend_form(tpu, ""), "project": other.pk}
    response = admin_client.post(f"/admin/parity/backend/{tpu.pk}/change/", form)

    assert response.status_code == 302
    tpu.refresh_from_db()
    assert tpu.project_id == project.pk
