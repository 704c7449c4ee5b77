"""Reading a user's groups from a provider (parity.sign_in.groups) against the local fakes:
GitHub's paginated lists, a failing API retried then given up, a refusal not retried."""

from types import SimpleNamespace

import pytest

from parity.sign_in import groups
from parity.sign_in.groups import GroupsUnavailable, groups_of
from tests.fake_sign_in import FakeProviders, Person


@pytest.fixture(scope="module")
def fake():
    with FakeProviders() as providers:
        yield providers


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch):
    monkeypatch.setattr(groups, "RETRY_SECONDS", 0.01)


def login(fake, kind: str, person: Person, **extra):
    """What allauth hands the receiver: the provider (its id and app settings), the token."""
    fake.tokens["token-1"] = person
    app_settings = {
        "github": {"github_url": f"{fake.url}/github"},
        "gitlab": {"gitlab_url": f"{fake.url}/gitlab"},
    }.get(kind, {"groups_claim": "roles.names"})
    return SimpleNamespace(
        provider=SimpleNamespace(id=kind, name=kind, app=SimpleNamespace(settings=app_settings)),
        token=SimpleNamespace(token="token-1"),
        account=SimpleNamespace(extra_data=extra),
    )


def test_github_reads_every_page_of_orgs_and_teams(fake):
    person = Person("ada", orgs=["o1", "o2", "o3", "o4", "o5"], teams=["o1/a", "o2/b", "o3/c"])
    found = groups_of(login(fake, "github", person))
    assert found == ["o1", "o2", "o3", "o4", "o5", "o1/a", "o2/b", "o3/c"]
    assert fake.calls.count("GET /github/api/v3/user/orgs") == 3  # two to a page


def test_a_failing_api_is_retried_then_given_up(fake):
    fake.fail("/github/api/v3/user/teams", times=2)
    assert groups_of(login(fake, "github", Person("ada", teams=["o/t"]))) == ["o/t"]
    fake.fail("/github/api/v3/user/teams", times=groups.ATTEMPTS)
    with pytest.raises(GroupsUnavailable, match="HTTP 502 after 3 attempts"):
        groups_of(login(fake, "github", Person("ada")))


def test_a_refusal_is_not_retried(fake):
    sign_in = login(fake, "github", Person("ada"))
    fake.tokens.clear()  # the token is no longer good
    before = len(fake.calls)
    with pytest.raises(GroupsUnavailable, match="answered 401"):
        groups_of(sign_in)
    assert len(fake.calls) == before + 1


def test_gitlab_groups_come_from_its_userinfo(fake):
    assert groups_of(login(fake, "gitlab", Person("grace", groups=["corp/ml"]))) == ["corp/ml"]


def test_an_oidc_claim_from_the_id_token_and_userinfo_together(fake):
    extra = {
        "id_token": {"roles": {"names": ["b", "a"]}},
        "userinfo": {"roles": {"names": ["a", "c"]}},
    }
    assert groups_of(login(fake, "corp", Person("mei"), **extra)) == ["a", "b", "c"]
