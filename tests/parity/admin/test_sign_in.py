"""The admin's group roles (docs/sign-in.md): a rule names a configured provider, or the form
says which ones are."""

import pytest
from django.test import override_settings

from parity.models import GroupRole
from parity.services.projects import project_create
from parity.settings.sign_in import SignInProvider

pytestmark = pytest.mark.django_db
GITHUB = SignInProvider("github", "github", "GitHub")


def rule(project, provider: str) -> dict:
    return {"provider": provider, "group": " pytorch/xla ", "project": project.pk, "role": "viewer"}


def test_a_rule_for_a_configured_provider_is_saved(admin_client):
    project = project_create(slug="p", backends=["cpu"], reference="cpu")
    with override_settings(PARITY_SIGN_IN_PROVIDERS=[GITHUB]):
        response = admin_client.post("/admin/parity/grouprole/add/", rule(project, "GitHub"))
    assert response.status_code == 302
    assert list(GroupRole.objects.values_list("provider", "group")) == [("github", "pytorch/xla")]


def test_a_rule_for_another_provider_is_refused_naming_the_configured_ones(admin_client):
    project = project_create(slug="p", backends=["cpu"], reference="cpu")
    with override_settings(PARITY_SIGN_IN_PROVIDERS=[GITHUB]):
        response = admin_client.post("/admin/parity/grouprole/add/", rule(project, "gitlab"))
    assert "No sign-in provider &#x27;gitlab&#x27; is configured; these are: github." in (
        response.content.decode()
    )
    with override_settings(PARITY_SIGN_IN_PROVIDERS=[]):
        response = admin_client.post("/admin/parity/grouprole/add/", rule(project, "github"))
    assert "none (docs/sign-in.md)" in response.content.decode()
    assert not GroupRole.objects.exists()
