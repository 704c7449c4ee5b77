"""Sign-in providers from the environment (parity.settings.sign_in): none unless a client id is
set, every mistake refused at start with the variable to fix, and with none configured, allauth
left out of the settings entirely."""

import json

import pytest
from django.core.exceptions import ImproperlyConfigured

from parity.settings.sign_in import sign_in_providers, socialaccount_providers
from tests.parity.settings.test_production import run


def test_nothing_set_is_no_provider():
    assert sign_in_providers({}) == []
    assert socialaccount_providers([]) == {}


def test_the_three_kinds_in_the_buttons_order():
    env = {
        "PARITY_SIGN_IN_OIDC": "keycloak, okta-prod",
        "PARITY_SIGN_IN_OIDC_KEYCLOAK_URL": "https://sso.example.org/realms/eng",
        "PARITY_SIGN_IN_OIDC_KEYCLOAK_CLIENT_ID": "parity",
        "PARITY_SIGN_IN_OIDC_KEYCLOAK_SECRET": "s1",
        "PARITY_SIGN_IN_OIDC_KEYCLOAK_GROUPS_CLAIM": "realm_access.roles",
        "PARITY_SIGN_IN_OIDC_OKTA_PROD_URL": "https://example.okta.com/",
        "PARITY_SIGN_IN_OIDC_OKTA_PROD_CLIENT_ID": "parity",
        "PARITY_SIGN_IN_OIDC_OKTA_PROD_SECRET": "s2",
        "PARITY_SIGN_IN_OIDC_OKTA_PROD_LABEL": "Okta",
        "PARITY_SIGN_IN_OIDC_OKTA_PROD_SCOPES": "openid profile groups",
        "PARITY_SIGN_IN_GITHUB_CLIENT_ID": "gh",
        "PARITY_SIGN_IN_GITHUB_SECRET": "s3",
    }
    providers = sign_in_providers(env)
    assert [(p.id, p.kind, p.label) for p in providers] == [
        ("github", "github", "GitHub"),
        ("keycloak", "openid_connect", "keycloak"),
        ("okta-prod", "openid_connect", "Okta"),
    ]
    config = socialaccount_providers(providers)
    assert "GITHUB_URL" not in config["github"]  # github.com
    assert "read:org" in config["github"]["SCOPE"]
    keycloak, okta = config["openid_connect"]["APPS"]
    assert keycloak["settings"]["groups_claim"] == "realm_access.roles"
    assert okta["settings"] == {
        "server_url": "https://example.okta.com",
        "groups_claim": "groups",
        "scope": ["openid", "profile", "groups"],
    }


@pytest.mark.parametrize(
    "env, fix",
    [
        ({"PARITY_SIGN_IN_GITHUB_CLIENT_ID": "gh"}, "PARITY_SIGN_IN_GITHUB_SECRET"),
        (
            {
                "PARITY_SIGN_IN_GITLAB_CLIENT_ID": "x",
                "PARITY_SIGN_IN_GITLAB_SECRET": "s",
                "PARITY_SIGN_IN_GITLAB_URL": "http://gitlab.example.org",
            },
            "not an https:// URL",
        ),
        ({"PARITY_SIGN_IN_OIDC": "corp"}, "PARITY_SIGN_IN_OIDC_CORP_URL"),
        ({"PARITY_SIGN_IN_OIDC": "github"}, "is not an id"),
        ({"PARITY_SIGN_IN_OIDC": "Corp SSO"}, "is not an id"),
    ],
)
def test_a_mistake_names_what_to_fix(env, fix):
    with pytest.raises(ImproperlyConfigured, match=fix):
        sign_in_providers(env)


SHOW = (
    "import json, django; from django.conf import settings; django.setup(); "
    "print(json.dumps([settings.INSTALLED_APPS, settings.MIDDLEWARE]))"
)


def test_with_no_provider_allauth_is_not_installed():
    done = run("-c", SHOW, DJANGO_SETTINGS_MODULE="parity.settings.local")
    assert done.returncode == 0, done.stderr
    apps, middleware = json.loads(done.stdout)
    assert not [a for a in apps if a.startswith("allauth")]
    assert not [m for m in middleware if m.startswith("allauth")]


def test_with_a_provider_allauth_is_installed_after_authentication():
    env = {"PARITY_SIGN_IN_GITHUB_CLIENT_ID": "gh", "PARITY_SIGN_IN_GITHUB_SECRET": "s"}
    done = run("-c", SHOW, DJANGO_SETTINGS_MODULE="parity.settings.local", **env)
    assert done.returncode == 0, done.stderr
    apps, middleware = json.loads(done.stdout)
    assert "allauth.socialaccount.providers.github" in apps
    position = middleware.index("allauth.account.middleware.AccountMiddleware")
    assert position > middleware.index("django.contrib.auth.middleware.AuthenticationMiddleware")
