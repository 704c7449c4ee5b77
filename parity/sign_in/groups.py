"""The groups a provider says a signed-in user belongs to: GitHub's organizations and teams
(its API, with the sign-in's access token), GitLab's groups (its OpenID userinfo), an OpenID
Connect provider's groups claim (the ID token's and userinfo's, already fetched by allauth)."""

import logging
import time

from django.conf import settings

from parity import outbound
from parity.pure.role_mapping import claim_groups, github_groups, next_page

logger = logging.getLogger(__name__)
# A provider's API that fails (a timeout, a 5xx) is asked this many times in all, waiting
# RETRY_SECONDS, then twice as long, in between: the user waits on the callback meanwhile.
ATTEMPTS = 3
RETRY_SECONDS = 0.5
# A member of more organizations or teams than 10 pages of 100 hears of the first thousand.
MAX_PAGES = 10
REDIRECTS_MAX = 3  # each judged by the egress policy; the token stays on its host


class GroupsUnavailable(Exception):
    """The provider did not answer which groups the user is in: roles stay as they were."""


def groups_of(sociallogin) -> list[str]:
    """The groups of the user ``sociallogin`` (allauth's) signed in, by its provider."""
    provider = sociallogin.provider
    app_settings = provider.app.settings or {}
    if provider.id == "github":
        return _github(sociallogin.token.token, app_settings.get("github_url", ""))
    if provider.id == "gitlab":
        return _gitlab(sociallogin.token.token, app_settings["gitlab_url"])
    extra = sociallogin.account.extra_data or {}
    claim = app_settings.get("groups_claim", "groups")
    found = claim_groups(extra.get("id_token") or {}, claim)
    return sorted({*found, *claim_groups(extra.get("userinfo") or {}, claim)})


def _github(token: str, github_url: str) -> list[str]:
    api = f"{github_url}/api/v3" if github_url else "https://api.github.com"
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json"}
    orgs = _pages(f"{api}/user/orgs?per_page=100", headers)
    teams = _pages(f"{api}/user/teams?per_page=100", headers)
    return github_groups(orgs=orgs, teams=teams)


def _gitlab(token: str, gitlab_url: str) -> list[str]:
    data, _ = _get(f"{gitlab_url}/oauth/userinfo", {"Authorization": f"Bearer {token}"})
    return claim_groups(data if isinstance(data, dict) else {}, "groups")


def _pages(url: str, headers: dict[str, str]) -> list[dict]:
    items: list[dict] = []
    for _ in range(MAX_PAGES):
        data, link = _get(url, headers)
        items += [item for item in data if isinstance(item, dict)] if isinstance(data, list) else []
        url = next_page(link)
        if url is None:
            break
    return items


def _get(url: str, headers: dict[str, str]) -> tuple[object, str]:
    """The JSON at ``url`` and its ``Link`` header (through ``parity.outbound``)."""
    timeout = settings.SOCIALACCOUNT_REQUESTS_TIMEOUT
    for attempt in range(1, ATTEMPTS + 1):
        try:
            response = outbound.request(
                "GET",
                url,
                headers=headers,
                timeout=timeout,
                redirects=REDIRECTS_MAX,
                purpose="sign-in groups",
            )
        except outbound.Refused as exc:  # no retry changes the egress policy's answer
            raise GroupsUnavailable(str(exc)) from exc
        except outbound.OutboundError as exc:
            problem = f"{type(exc).__name__}"
        else:
            if response.status < 500:
                # A 4xx (a token without the scope, an organization's OAuth app policy) will
                # not change on a retry.
                if not 200 <= response.status < 300:
                    raise GroupsUnavailable(f"{url} answered {response.status}")
                try:
                    return response.json(), response.header("link")
                except ValueError as exc:
                    raise GroupsUnavailable(f"{url} answered no JSON") from exc
            problem = f"HTTP {response.status}"
        logger.warning("sign-in groups url=%s attempt=%d failed: %s", url, attempt, problem)
        if attempt < ATTEMPTS:
            time.sleep(RETRY_SECONDS * 2 ** (attempt - 1))
    raise GroupsUnavailable(f"{url}: {problem} after {ATTEMPTS} attempts")
