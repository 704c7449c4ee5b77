"""A sign-in's memberships in the database (parity.services.sign_in): granted, changed and
removed as the groups say, the administrator's own grants left alone, and a second sign-in with
the same groups a no-op."""

import pytest
from django.contrib.auth import get_user_model

from parity.models import GroupRole, Membership, Role
from parity.services.projects import project_create
from parity.services.sign_in import memberships_sync

pytestmark = pytest.mark.django_db


@pytest.fixture
def projects():
    made = {s: project_create(slug=s, backends=["cpu"], reference="cpu") for s in ("a", "b", "c")}
    GroupRole.objects.create(provider="GitHub ", group="pytorch", project=made["a"])
    GroupRole.objects.create(
        provider="github", group="pytorch/xla", project=made["a"], role=Role.MAINTAINER
    )
    GroupRole.objects.create(provider="github", group="pytorch", project=made["b"])
    GroupRole.objects.create(provider="corp", group="pytorch", project=made["c"])
    return made


def held(user) -> dict[str, tuple[str, str]]:
    rows = Membership.objects.filter(user=user).values_list("project__slug", "role", "granted_by")
    return {slug: (role, granted_by) for slug, role, granted_by in rows}


def test_groups_grant_then_leaving_them_removes_what_they_granted(projects):
    user = get_user_model().objects.create_user("ada")
    Membership.objects.create(user=user, project=projects["c"], role=Role.MAINTAINER)

    memberships_sync(user=user, provider="github", groups=["PyTorch", "pytorch/xla"])
    assert held(user) == {
        "a": ("maintainer", "github"),
        "b": ("viewer", "github"),
        "c": ("maintainer", ""),
    }
    assert not memberships_sync(user=user, provider="github", groups=["pytorch", "pytorch/xla"])

    memberships_sync(user=user, provider="github", groups=["pytorch"])
    assert held(user)["a"] == ("viewer", "github")

    memberships_sync(user=user, provider="github", groups=[])
    assert held(user) == {"c": ("maintainer", "")}


def test_another_providers_grant_is_not_touched(projects):
    user = get_user_model().objects.create_user("grace")
    memberships_sync(user=user, provider="corp", groups=["pytorch"])
    memberships_sync(user=user, provider="github", groups=[])
    assert held(user) == {"c": ("viewer", "corp")}


def test_a_rule_is_stored_as_its_provider_is_named(projects):
    assert set(GroupRole.objects.values_list("provider", flat=True)) == {"corp", "github"}
