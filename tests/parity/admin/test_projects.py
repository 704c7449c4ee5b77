"""The admin's project pages: a backend's command template is checked before it is saved."""

from parity.models import Backend


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
