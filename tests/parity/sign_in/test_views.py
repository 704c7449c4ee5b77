"""With no provider configured the login page is Django's form alone, local accounts log in as
before, and allauth's paths do not exist (tests/e2e/test_sign_in.py signs in with providers)."""

import pytest
from django.contrib.auth import get_user_model

pytestmark = pytest.mark.django_db


def test_no_provider_no_button_and_local_accounts_log_in(client):
    page = client.get("/accounts/login/?next=/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Sign in with" not in html and "sign-in" not in html
    assert 'name="username"' in html and 'name="password"' in html

    get_user_model().objects.create_user("ada", password="a-long-password-1")
    answer = client.post("/accounts/login/", {"username": "ada", "password": "a-long-password-1"})
    assert (answer.status_code, answer["Location"]) == (302, "/")


@pytest.mark.parametrize(
    "path", ["/accounts/github/login/", "/accounts/oidc/corp/login/", "/accounts/signup/"]
)
def test_no_provider_no_allauth_paths(client, path):
    assert client.get(path).status_code == 404
