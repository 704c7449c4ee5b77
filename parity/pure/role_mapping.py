"""The project roles a sign-in grants (docs/sign-in.md): the groups a provider reports (GitHub's
organizations and teams, GitLab's groups, an OpenID Connect groups claim), the rules that map a
group to a role in a project, and the memberships the user holds, in; the changes, out.

**Invariant:** a sign-in changes only the memberships a sign-in through the same provider
granted; one granted by hand, or through another provider, is never touched.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# A group granting several roles in one project grants the highest.
ROLE_RANK = {"viewer": 1, "maintainer": 2}


@dataclass(frozen=True)
class GroupRule:
    group: str
    project_id: int
    role: str


@dataclass(frozen=True)
class Held:
    """A membership the user holds; ``granted_by`` is blank when it was granted by hand."""

    project_id: int
    role: str
    granted_by: str


@dataclass(frozen=True)
class Changes:
    grant: dict[int, str]  # project id -> role: new memberships
    change: dict[int, str]  # project id -> role: the provider's memberships with a new role
    revoke: frozenset[int]  # project ids: the provider's memberships its groups no longer grant

    def __bool__(self) -> bool:
        return bool(self.grant or self.change or self.revoke)


def group_key(name: str) -> str:
    """Groups compare in any case and without surrounding spaces or slashes (GitHub logins and
    GitLab paths are case-insensitive)."""
    return name.strip().strip("/").casefold()


def roles_granted(*, groups: Iterable[str], rules: Iterable[GroupRule]) -> dict[int, str]:
    """Per project, the highest role the rules of ``groups`` grant."""
    keys = {group_key(g) for g in groups}
    granted: dict[int, str] = {}
    for rule in rules:
        if group_key(rule.group) not in keys:
            continue
        held = granted.get(rule.project_id)
        if held is None or ROLE_RANK[rule.role] > ROLE_RANK[held]:
            granted[rule.project_id] = rule.role
    return granted


def membership_changes(
    *, provider: str, granted: Mapping[int, str], held: Iterable[Held]
) -> Changes:
    """What a sign-in through ``provider`` changes, given the roles its groups grant."""
    held_by_project = {h.project_id: h for h in held}
    grant = {p: role for p, role in granted.items() if p not in held_by_project}
    change, revoke = {}, set()
    for project_id, membership in held_by_project.items():
        if membership.granted_by != provider:
            continue  # granted by hand or through another provider: theirs to change
        role = granted.get(project_id)
        if role is None:
            revoke.add(project_id)
        elif role != membership.role:
            change[project_id] = role
    return Changes(grant=grant, change=change, revoke=frozenset(revoke))


# --- Groups from what the providers answer ------------------------------------------------


def github_groups(*, orgs: Iterable[Mapping], teams: Iterable[Mapping]) -> list[str]:
    """GitHub's ``/user/orgs`` and ``/user/teams`` as groups: ``org`` and ``org/team-slug``."""
    names = [org["login"] for org in orgs if org.get("login")]
    for team in teams:
        org = (team.get("organization") or {}).get("login")
        if org and team.get("slug"):
            names.append(f"{org}/{team['slug']}")
    return names


def claim_groups(claims: Mapping, path: str) -> list[str]:
    """The groups in ``claims`` at ``path`` (``groups``, or a dotted path into objects such as
    Keycloak's ``realm_access.roles``): a list of strings, or one string. Anything else, or
    nothing there, is no group."""
    value: object = claims
    for part in path.split("."):
        if not isinstance(value, Mapping):
            return []
        value = value.get(part)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def next_page(link_header: str) -> str | None:
    """The ``rel="next"`` URL of an RFC 8288 ``Link`` header (GitHub's pagination), if any."""
    for part in link_header.split(","):
        url, _, params = part.partition(";")
        if 'rel="next"' in params.replace(" ", ""):
            return url.strip().removeprefix("<").removesuffix(">")
    return None
