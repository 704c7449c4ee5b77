"""Sign-in providers (GitHub, GitLab, OpenID Connect) from the environment, as django-allauth's
``SOCIALACCOUNT_PROVIDERS`` wants them (docs/sign-in.md). A provider is on when its client id is
set; with none, parity keeps Django's login form alone and allauth is not installed at all.

    PARITY_SIGN_IN_GITHUB_CLIENT_ID, _SECRET, _URL (GitHub Enterprise; unset: github.com)
    PARITY_SIGN_IN_GITLAB_CLIENT_ID, _SECRET, _URL (unset: https://gitlab.com)
    PARITY_SIGN_IN_OIDC=keycloak,okta  and per id: PARITY_SIGN_IN_OIDC_<ID>_URL (the issuer),
        _CLIENT_ID, _SECRET, _LABEL (the button's name), _GROUPS_CLAIM (default "groups", a
        dotted path reaches into an object: realm_access.roles), _SCOPES (space-separated)
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from django.core.exceptions import ImproperlyConfigured

# GitHub's organizations and teams need read:org; GitLab's groups come with its userinfo, which
# needs openid. Neither asks for more than reading who the user is.
GITHUB_SCOPES = ["read:user", "user:email", "read:org"]
GITLAB_SCOPES = ["read_user", "openid"]
OIDC_SCOPES = "openid profile email"
_OIDC_ID = re.compile(r"[a-z][a-z0-9-]{0,39}")
# Their own allauth providers, with URLs of their own: an OIDC provider may not take their ids.
_RESERVED_IDS = {"github", "gitlab", "openid_connect"}


@dataclass(frozen=True)
class SignInProvider:
    id: str  # the id GroupRole rows name: github, gitlab, or an OIDC provider's own
    kind: str  # allauth's provider: github, gitlab or openid_connect
    label: str  # "Sign in with <label>"
    app: dict = field(default_factory=dict, compare=False)  # allauth's APPS entry


def _local(url: str) -> bool:
    return url.startswith(("http://127.0.0.1:", "http://localhost:"))


def _url(name: str, url: str) -> str:
    url = url.strip().rstrip("/")
    if url and not (url.startswith("https://") or _local(url)):
        raise ImproperlyConfigured(f"{name}: {url!r} is not an https:// URL.")
    return url


def _secret(environ: Mapping[str, str], prefix: str) -> str:
    secret = environ.get(f"{prefix}_SECRET", "")
    if not secret:
        raise ImproperlyConfigured(f"{prefix}_CLIENT_ID is set but {prefix}_SECRET is not.")
    return secret


def _github(environ: Mapping[str, str]) -> SignInProvider | None:
    prefix = "PARITY_SIGN_IN_GITHUB"
    client_id = environ.get(f"{prefix}_CLIENT_ID", "")
    if not client_id:
        return None
    app = {"client_id": client_id, "secret": _secret(environ, prefix)}
    url = _url(f"{prefix}_URL", environ.get(f"{prefix}_URL", ""))
    return SignInProvider("github", "github", "GitHub", {**app, "settings": {"github_url": url}})


def _gitlab(environ: Mapping[str, str]) -> SignInProvider | None:
    prefix = "PARITY_SIGN_IN_GITLAB"
    client_id = environ.get(f"{prefix}_CLIENT_ID", "")
    if not client_id:
        return None
    url = _url(f"{prefix}_URL", environ.get(f"{prefix}_URL", "")) or "https://gitlab.com"
    app = {"client_id": client_id, "secret": _secret(environ, prefix)}
    return SignInProvider("gitlab", "gitlab", "GitLab", {**app, "settings": {"gitlab_url": url}})


def _oidc(environ: Mapping[str, str], provider_id: str) -> SignInProvider:
    if not _OIDC_ID.fullmatch(provider_id) or provider_id in _RESERVED_IDS:
        raise ImproperlyConfigured(
            f"PARITY_SIGN_IN_OIDC: {provider_id!r} is not an id (lower-case letters, digits, -)."
        )
    prefix = f"PARITY_SIGN_IN_OIDC_{provider_id.upper().replace('-', '_')}"
    url = _url(f"{prefix}_URL", environ.get(f"{prefix}_URL", ""))
    client_id = environ.get(f"{prefix}_CLIENT_ID", "")
    if not url or not client_id:
        raise ImproperlyConfigured(
            f"PARITY_SIGN_IN_OIDC names {provider_id}: set {prefix}_URL and {prefix}_CLIENT_ID."
        )
    label = environ.get(f"{prefix}_LABEL", "") or provider_id
    settings = {
        "server_url": url,
        "groups_claim": environ.get(f"{prefix}_GROUPS_CLAIM", "") or "groups",
        "scope": (environ.get(f"{prefix}_SCOPES", "") or OIDC_SCOPES).split(),
    }
    app = {"provider_id": provider_id, "name": label, "client_id": client_id, "settings": settings}
    app["secret"] = _secret(environ, prefix)
    return SignInProvider(provider_id, "openid_connect", label, app)


def sign_in_providers(environ: Mapping[str, str]) -> list[SignInProvider]:
    """The providers the environment configures, in the order of the login page's buttons."""
    found = [_github(environ), _gitlab(environ)]
    oidc_ids = [i.strip() for i in environ.get("PARITY_SIGN_IN_OIDC", "").split(",") if i.strip()]
    found += [_oidc(environ, provider_id) for provider_id in oidc_ids]
    return [provider for provider in found if provider is not None]


def socialaccount_providers(providers: list[SignInProvider]) -> dict[str, dict]:
    """allauth's ``SOCIALACCOUNT_PROVIDERS`` for ``providers``."""
    config: dict[str, dict] = {}
    for provider in providers:
        entry = config.setdefault(provider.kind, {"APPS": []})
        entry["APPS"].append(provider.app)
        if provider.kind == "github":
            entry["SCOPE"] = GITHUB_SCOPES
            # allauth reads GitHub's address from here, not from the app.
            if provider.app["settings"]["github_url"]:
                entry["GITHUB_URL"] = provider.app["settings"]["github_url"]
        elif provider.kind == "gitlab":
            entry["SCOPE"] = GITLAB_SCOPES
    return config
