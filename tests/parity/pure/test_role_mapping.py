"""The sign-in's role rule (parity.pure.role_mapping): which roles groups grant, and what a
sign-in changes of the memberships a user holds."""

from parity.pure.role_mapping import (
    GroupRule,
    Held,
    claim_groups,
    github_groups,
    membership_changes,
    next_page,
    roles_granted,
)

RULES = [
    GroupRule("pytorch", 1, "viewer"),
    GroupRule("pytorch/xla-maintainers", 1, "maintainer"),
    GroupRule("PyTorch", 2, "viewer"),
    GroupRule("corp/ml", 3, "maintainer"),
]


def test_the_highest_role_of_the_matching_groups_in_any_case():
    assert roles_granted(groups=["PYTORCH", "pytorch/XLA-maintainers"], rules=RULES) == {
        1: "maintainer",
        2: "viewer",
    }
    assert roles_granted(groups=[" pytorch "], rules=RULES) == {1: "viewer", 2: "viewer"}


def test_groups_no_rule_names_grant_nothing():
    assert roles_granted(groups=["elsewhere", "pytorch/docs"], rules=RULES) == {}
    assert roles_granted(groups=[], rules=RULES) == {}


def test_a_sign_in_grants_changes_and_revokes_only_its_own_memberships():
    held = [
        Held(1, "maintainer", "github"),  # the team was left: viewer now
        Held(2, "viewer", "github"),  # the organization was left: revoked
        Held(3, "viewer", ""),  # granted by hand
        Held(4, "maintainer", "corp"),  # granted through another provider
    ]
    changes = membership_changes(provider="github", granted={1: "viewer", 5: "viewer"}, held=held)
    assert changes.grant == {5: "viewer"}
    assert changes.change == {1: "viewer"}
    assert changes.revoke == {2}


def test_a_membership_held_by_hand_is_not_granted_again_nor_raised():
    changes = membership_changes(
        provider="github", granted={3: "maintainer"}, held=[Held(3, "viewer", "")]
    )
    assert not changes


def test_nothing_to_change_is_falsy():
    held = [Held(1, "viewer", "github")]
    assert not membership_changes(provider="github", granted={1: "viewer"}, held=held)
    assert membership_changes(provider="github", granted={}, held=held).revoke == {1}


def test_github_orgs_and_teams_as_groups():
    orgs = [{"login": "pytorch"}, {"login": ""}, {}]
    teams = [
        {"slug": "xla-maintainers", "organization": {"login": "pytorch"}},
        {"slug": "orphan"},
    ]
    assert github_groups(orgs=orgs, teams=teams) == ["pytorch", "pytorch/xla-maintainers"]


def test_a_claim_a_dotted_path_a_single_string_or_nothing_usable():
    claims = {"groups": ["a", 3, "b"], "realm_access": {"roles": ["admin"]}, "team": "ml"}
    assert claim_groups(claims, "groups") == ["a", "b"]
    assert claim_groups(claims, "realm_access.roles") == ["admin"]
    assert claim_groups(claims, "team") == ["ml"]
    assert claim_groups(claims, "missing") == []
    assert claim_groups(claims, "team.x") == []
    assert claim_groups({"groups": {"a": 1}}, "groups") == []


def test_the_next_page_of_a_link_header():
    link = (
        '<https://api.github.com/user/orgs?page=2>; rel="next", '
        '<https://api.github.com/user/orgs?page=5>; rel="last"'
    )
    assert next_page(link) == "https://api.github.com/user/orgs?page=2"
    assert next_page('<https://api.github.com/user/orgs?page=1>; rel="prev"') is None
    assert next_page("") is None
