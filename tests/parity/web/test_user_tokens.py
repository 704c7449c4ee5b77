"""A user's API token (``create_user_token``) acts as that user through the API: their roles
decide what it reads and whether it triages (docs/access.md); it never uploads, and a revoked
token or an inactive user's answers 401."""

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from parity.models import Membership, Project, Role, Triage, Upload, UserToken
from parity.services.projects import user_token_create
from tests.parity.web.test_access import API, gaps, private, triage_body

__all__ = ["gaps", "private"]  # fixtures, shared with test_access


def token_client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def member(project: Project | None, username: str, role: str = "") -> str:
    """A new user with ``role`` in ``project`` (none: a stranger), and a token of theirs."""
    user = get_user_model().objects.create_user(username, password="x" * 12)
    if role:
        Membership.objects.create(user=user, project=project, role=role)
    return user_token_create(user=user, label="bot")


def test_a_viewer_s_token_reads_a_private_project_but_may_not_triage(private, gaps):
    viewer = token_client(member(private, "reader", Role.VIEWER))
    gap = gaps["test/a.py::TestA::test_1"]

    read = viewer.get(f"{API}/gaps/")
    refused = viewer.post(f"{API}/triage/", triage_body(gap), format="json")

    assert read.status_code == 200
    assert [g["test"] for g in read.json()["results"]] == ["test/a.py::TestA::test_1"]
    assert refused.status_code == 403
    assert refused.json()["detail"] == "Only maintainers of 'pytorch-xla' may triage it."
    assert not Triage.objects.exists()
    assert UserToken.objects.get().last_used_at is not None


def test_a_maintainer_s_token_triages_as_the_maintainer(private, gaps):
    maintainer = token_client(member(private, "triager", Role.MAINTAINER))
    gap = gaps["test/a.py::TestA::test_1"]

    made = maintainer.post(f"{API}/triage/", triage_body(gap), format="json")

    assert made.status_code == 201, made.json()
    assert made.json()["created_by"] == "triager"
    assert Triage.objects.get().created_by.username == "triager"


def test_a_stranger_s_token_finds_no_private_project(private):
    stranger = token_client(member(None, "stranger"))

    assert stranger.get(f"{API}/gaps/").status_code == 404


def test_a_user_s_token_never_uploads(private):
    maintainer = token_client(member(private, "triager", Role.MAINTAINER))
    uploads = Upload.objects.count()

    response = maintainer.post("/api/v1/uploads/", {"project": "pytorch-xla"}, format="multipart")

    assert response.status_code == 403
    assert "needs an upload token" in response.json()["detail"]
    assert Upload.objects.count() == uploads


def test_a_revoked_token_or_an_inactive_user_s_is_refused(private):
    revoked, inactive = (member(private, name, Role.MAINTAINER) for name in ("gone", "left"))
    UserToken.objects.filter(user__username="gone").update(revoked=True)
    get_user_model().objects.filter(username="left").update(is_active=False)

    for key in (revoked, inactive):
        response = token_client(key).get(f"{API}/gaps/")
        assert response.status_code == 401
        assert (
            response.json()["detail"]
            == "Invalid or revoked token: neither a project's nor an active user's."
        )


@pytest.mark.django_db
def test_create_user_token_prints_a_key_that_authenticates(project):
    user = get_user_model().objects.create_user("bot", password="x" * 12)
    out = io.StringIO()

    call_command("create_user_token", "bot", "--label", "mcp", stdout=out)

    key = out.getvalue().strip()
    assert token_client(key).get(f"{API}/gaps/").status_code == 200
    token = UserToken.objects.get()
    assert (token.user, token.label, token.prefix) == (user, "mcp", key[:8])
    assert token.digest != key  # only its digest is kept
    with pytest.raises(CommandError, match="No user 'nobody'"):
        call_command("create_user_token", "nobody")
