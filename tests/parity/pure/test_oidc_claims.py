"""parity.pure.oidc_claims: GitHub's, GitLab's and Buildkite's claims read as one CI identity, the
ref and workflow globs, and a rule's first mismatch (pure: no database)."""

from types import SimpleNamespace

import pytest

from parity.pure.oidc_claims import glob_match, identity_from_claims, rule_mismatch, rules_match


def rule(pk=1, **fields):
    values = {
        "issuer": "https://gitlab.com",
        "repository": "",
        "repository_id": "",
        "ref": "",
        "workflow": "",
        "environment": "",
    }
    return SimpleNamespace(pk=pk, **{**values, **fields})


def test_gitlab_claims_read_as_repository_and_full_refs():
    branch = identity_from_claims(
        {"iss": "https://gitlab.com/", "project_path": "group/sub/xla", "project_id": 77,
         "ref": "main", "ref_type": "branch", "environment": "prod"}
    )  # fmt: skip
    tag = identity_from_claims({"project_path": "g/x", "ref": "v1.2", "ref_type": "tag"})

    assert (branch.issuer, branch.repository, branch.repository_id) == (
        "https://gitlab.com",
        "group/sub/xla",
        "77",
    )
    assert (branch.ref, branch.environment, branch.workflow) == ("refs/heads/main", "prod", None)
    assert tag.ref == "refs/tags/v1.2"


def test_buildkite_claims_read_as_organization_and_pipeline():
    identity = identity_from_claims(
        {"iss": "https://agent.buildkite.com", "organization_slug": "acme",
         "pipeline_slug": "xla-tpu", "pipeline_id": "p-1", "build_branch": "main"}
    )  # fmt: skip

    assert (identity.repository, identity.repository_id, identity.ref) == (
        "acme/xla-tpu",
        "p-1",
        "refs/heads/main",
    )


def test_claims_of_no_known_ci_match_no_rule():
    identity = identity_from_claims({"iss": "https://gitlab.com", "sub": "x"})

    assert rule_mismatch(rule(repository="g/x"), identity) == (
        "repository",
        "the token has no 'repository' claim",
    )


@pytest.mark.parametrize(
    ("pattern", "value", "matches"),
    [
        ("refs/heads/*", "refs/heads/main", True),
        ("refs/heads/*", "refs/heads/a/b", False),
        ("refs/heads/**", "refs/heads/a/b", True),
        ("refs/tags/v?", "refs/tags/v1", True),
        ("refs/tags/v?", "refs/tags/v10", False),
        ("refs/heads/main", "refs/heads/main2", False),
        ("refs/heads/[a]", "refs/heads/a", False),  # brackets are literal, not a class
        ("Nightly *", "Nightly TPU", True),
    ],
)
def test_globs(pattern, value, matches):
    assert glob_match(pattern, value) is matches


def test_the_first_matching_rule_wins_and_the_others_say_why():
    identity = identity_from_claims(
        {"iss": "https://gitlab.com", "project_path": "g/x", "ref": "dev"}
    )
    rules = [
        rule(1, repository="g/y"),
        rule(2, repository="G/X", ref="refs/heads/main"),
        rule(3, repository="g/x"),
    ]

    matched, mismatches = rules_match(rules, identity)

    assert matched.pk == 3
    assert [(m.rule_id, m.claim, m.why) for m in mismatches] == [
        (1, "repository", "repository 'g/x' does not match"),
        (2, "ref", "ref 'refs/heads/dev' does not match"),
    ]
