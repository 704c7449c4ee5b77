"""Sign-in through GitHub, GitLab and an OpenID Connect provider on the live stack (gunicorn with
django-allauth), against local fakes of the three (``tests.fake_sign_in``): a browser's whole
redirect dance with a real HTTP client keeping cookies, from the login page's button to the
dashboard, and the project roles the person's groups map to, then what a sign-in after leaving
a group leaves. The login page's buttons are looked at in Chromium at two widths."""

import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
import requests
from django.contrib.auth import get_user_model

from parity.models import GroupRole, Membership, Project, Role
from parity.services.projects import project_create
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, SCREENSHOTS, VIEWPORTS, no_chromium
from tests.e2e.conftest import STALE_SECONDS, stack_started
from tests.fake_sign_in import OIDC_ID, FakeProviders, Person

REPO_DIR = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

_BUTTON = re.compile(
    r'<form method="post" action="([^"]+)"><input type="hidden" name="csrfmiddlewaretoken" '
    r'value="([^"]+)">.*?>Sign in with ([^<]+)</button>',
    re.DOTALL,
)


@pytest.fixture(scope="module")
def providers():
    with FakeProviders() as fake:
        yield fake


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory, providers):
    """This module's stack (the e2e ``live`` fixture serves it), configured with the fakes, its
    static files collected where whitenoise serves them (the browser looks at the page)."""
    var = tmp_path_factory.mktemp("sign-in-var")
    env = {
        "PARITY_UPLOAD_STALE_SECONDS": str(STALE_SECONDS),
        "PARITY_VAR_DIR": str(var),
        **providers.env(),
    }
    collect = [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"]
    settings = {"DJANGO_SETTINGS_MODULE": "parity.settings.test", **env}
    subprocess.run(collect, check=True, cwd=REPO_DIR, env={**os.environ, **settings})
    yield from stack_started(tmp_path_factory, env)


@pytest.fixture
def projects(project) -> dict[str, Project]:
    """Three private projects, and the rules an administrator keeps in the admin."""
    made = {
        slug: project_create(slug=slug, backends=["cpu", "tpu"], reference="cpu")
        for slug in ("alpha", "beta", "gamma")
    }
    rules = [
        ("github", "pytorch/xla-maintainers", "alpha", Role.MAINTAINER),
        ("github", "PyTorch", "alpha", Role.VIEWER),  # the team's role wins: the highest
        ("github", "pytorch", "beta", Role.VIEWER),
        ("gitlab", "corp/ml", "beta", Role.MAINTAINER),
        (OIDC_ID, "parity-readers", "gamma", Role.VIEWER),
    ]
    for provider, group, slug, role in rules:
        GroupRole.objects.create(provider=provider, group=group, project=made[slug], role=role)
    return made


def signed_in(
    live, label: str, start: str = "/accounts/login/?next=/"
) -> tuple[requests.Session, requests.Response]:
    """A browser's sign-in: ``start`` (the login page, or a page that sends there), its "Sign
    in with <label>" button (a form POST), then every redirect through the provider and back,
    cookies kept."""
    browser = requests.Session()
    page = browser.get(f"{live.base_url}{start}", timeout=30)
    assert page.status_code == 200 and urlsplit(page.url).path == "/accounts/login/"
    buttons = {name: (action, csrf) for action, csrf, name in _BUTTON.findall(page.text)}
    next_field = re.search(r'name="next" value="([^"]*)"', page.text).group(1)
    action, csrf = buttons[label]
    answer = browser.post(
        urljoin(page.url, action),
        data={"csrfmiddlewaretoken": csrf, "next": next_field},
        headers={"Referer": page.url},
        timeout=60,
    )
    return browser, answer


def access(live, browser: requests.Session, slug: str) -> str:
    """What the signed-in browser may do in ``slug``: "triage", "read" or "none", as the API
    answers it (a triage with no body: 400 to a maintainer, 403 to a reader, 404 to others)."""
    read = browser.get(f"{live.base_url}/api/v1/projects/{slug}/parity/", timeout=30)
    if read.status_code == 404:
        return "none"
    assert read.status_code == 200, read.text
    triage = browser.post(
        f"{live.base_url}/api/v1/projects/{slug}/triage/",
        json={},
        headers={"X-CSRFToken": browser.cookies["csrftoken"], "Referer": live.base_url},
        timeout=30,
    )
    assert triage.status_code in (400, 403), (triage.status_code, triage.text)
    return "triage" if triage.status_code == 400 else "read"


def accesses(live, browser) -> dict[str, str]:
    return {slug: access(live, browser, slug) for slug in ("alpha", "beta", "gamma")}


def landed_on_dashboard(live, answer: requests.Response, path: str = "/") -> None:
    assert answer.status_code == 200, answer.text[-2000:]
    assert answer.url == f"{live.base_url}{path}", answer.url
    assert "Log out" in answer.text or "logout" in answer.text


def test_the_login_page_offers_each_provider(live, projects):
    page = requests.get(f"{live.base_url}/accounts/login/", timeout=30)
    labels = [name for _, _, name in _BUTTON.findall(page.text)]
    assert labels == ["GitHub", "GitLab", "Corp SSO"]
    assert 'name="username"' in page.text and 'name="password"' in page.text  # local accounts
    # allauth signs in through providers only: no sign-up or password pages of its own.
    for path in ("/accounts/signup/", "/accounts/password/reset/", "/accounts/email/"):
        assert requests.get(f"{live.base_url}{path}", timeout=30).status_code == 404, path


def test_github_teams_and_orgs_grant_roles_and_leaving_removes_them(live, projects, providers):
    providers.person = Person(
        login="ada",
        uid=7,
        email="ada@example.org",
        orgs=["other-1", "pytorch", "other-2"],  # two pages of GitHub's list
        teams=["pytorch/xla-maintainers", "other-1/docs"],
    )
    browser, answer = signed_in(live, "GitHub")
    landed_on_dashboard(live, answer)
    assert "read:org" in providers.scopes[-1].split()
    assert accesses(live, browser) == {"alpha": "triage", "beta": "read", "gamma": "none"}
    ada = Membership.objects.filter(project__slug="alpha").get().user
    # An administrator's own grant, which no sign-in touches.
    Membership.objects.create(user=ada, project=projects["gamma"], role=Role.VIEWER)

    providers.person.teams = []  # left the team: a viewer through the organization
    browser, answer = signed_in(live, "GitHub")
    landed_on_dashboard(live, answer)
    assert accesses(live, browser) == {"alpha": "read", "beta": "read", "gamma": "read"}

    providers.person.orgs = ["other-1"]  # left the organization
    browser, answer = signed_in(live, "GitHub")
    landed_on_dashboard(live, answer)
    assert accesses(live, browser) == {"alpha": "none", "beta": "none", "gamma": "read"}
    assert list(Membership.objects.filter(user=ada).values_list("project__slug", "granted_by")) == [
        ("gamma", "")
    ]


def test_a_person_whose_groups_map_to_nothing_gets_no_project(live, projects, providers):
    providers.person = Person(login="eve", uid=66, orgs=["elsewhere"], teams=["elsewhere/all"])
    browser, answer = signed_in(live, "GitHub")
    landed_on_dashboard(live, answer)
    assert accesses(live, browser) == {"alpha": "none", "beta": "none", "gamma": "none"}
    assert not Membership.objects.exists()


def test_gitlab_groups_and_the_oidc_groups_claim(live, projects, providers):
    providers.person = Person(login="grace", uid=8, groups=["Corp/ML", "parity-readers"])
    # From a link to a private page: the login page, GitLab, and back to that page.
    browser, answer = signed_in(live, "GitLab", start="/p/beta/")
    landed_on_dashboard(live, answer, path="/p/beta/")
    assert "openid" in providers.scopes[-1].split()  # GitLab's userinfo, with the groups
    assert accesses(live, browser) == {"alpha": "none", "beta": "triage", "gamma": "none"}

    browser, answer = signed_in(live, "Corp SSO")  # the claim is in the ID token only
    landed_on_dashboard(live, answer)
    assert accesses(live, browser) == {"alpha": "none", "beta": "none", "gamma": "read"}
    granted = Membership.objects.values_list("user__username", "project__slug", "granted_by")
    assert sorted(g[1:] for g in granted) == [("beta", "gitlab"), ("gamma", OIDC_ID)]


def test_a_local_account_with_the_same_email_is_not_taken_over(live, projects, providers):
    local = get_user_model().objects.create_user("ada", email="ada@example.org")
    Membership.objects.create(user=local, project=projects["alpha"], role=Role.MAINTAINER)
    providers.person = Person(login="ada", uid=11, email="ada@example.org")
    browser, answer = signed_in(live, "GitHub")
    landed_on_dashboard(live, answer)
    assert accesses(live, browser) == {"alpha": "none", "beta": "none", "gamma": "none"}
    assert get_user_model().objects.filter(email="ada@example.org").count() == 2


def test_a_provider_that_fails_the_code_exchange_is_a_page_not_a_500(live, projects, providers):
    providers.person = Person(login="mei", uid=12, groups=["parity-readers"])
    providers.fail("/oidc/token", times=1)
    _, answer = signed_in(live, "Corp SSO")
    assert answer.status_code == 401
    assert "Sign-in failed" in answer.text and "Corp SSO" in answer.text
    assert "sign-in failed provider=corp" in live.log_since_mark(live.web)
    browser, answer = signed_in(live, "Corp SSO")  # trying again works
    landed_on_dashboard(live, answer)
    assert accesses(live, browser) == {"alpha": "none", "beta": "none", "gamma": "read"}


def test_a_github_outage_is_retried_then_leaves_the_roles_as_they_were(live, projects, providers):
    providers.person = Person(login="lin", uid=9, orgs=["pytorch"])
    providers.fail("/github/api/v3/user/orgs", times=1)
    browser, answer = signed_in(live, "GitHub")
    landed_on_dashboard(live, answer)
    assert accesses(live, browser) == {"alpha": "read", "beta": "read", "gamma": "none"}

    providers.person.orgs = []
    providers.fail("/github/api/v3/user/orgs", times=3)  # every attempt of the sign-in
    browser, answer = signed_in(live, "GitHub")
    landed_on_dashboard(live, answer)
    assert "GitHub did not say which groups you are in" in answer.text
    assert accesses(live, browser) == {"alpha": "read", "beta": "read", "gamma": "none"}
    assert providers.failures["/github/api/v3/user/orgs"] == 0


@no_chromium
def test_the_login_page_in_a_browser(live, projects, providers):
    from playwright.sync_api import sync_playwright

    providers.person = Person(login="mei", uid=10, groups=["parity-readers"])
    SCREENSHOTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            for width in ("desktop", "narrow"):
                page = browser.new_page(viewport=VIEWPORTS[width])
                errors: list[str] = []
                page.on(
                    "console", lambda m, errors=errors: m.type == "error" and errors.append(m.text)
                )
                page.goto(f"{live.base_url}/accounts/login/")
                buttons = page.get_by_role("button", name=re.compile("^Sign in with"))
                assert buttons.all_inner_texts() == [
                    "Sign in with GitHub",
                    "Sign in with GitLab",
                    "Sign in with Corp SSO",
                ]
                overflow = page.evaluate(
                    "document.documentElement.scrollWidth - document.documentElement.clientWidth"
                )
                assert overflow <= 0, f"the login page scrolls sideways at {width}"
                page.screenshot(path=str(SCREENSHOTS / f"sign_in_{width}.png"), full_page=True)
                assert not errors
                page.close()
            page = browser.new_page(viewport=VIEWPORTS["desktop"])
            page.goto(f"{live.base_url}/accounts/login/")
            page.get_by_role("button", name="Sign in with Corp SSO").click()
            page.wait_for_url(f"{live.base_url}/")
            assert urlsplit(page.url).path == "/"
            projects_shown = page.locator("h2 a").all_inner_texts()
            assert "gamma" in projects_shown and "alpha" not in projects_shown, projects_shown
            page.screenshot(path=str(SCREENSHOTS / "sign_in_landed.png"), full_page=True)
        finally:
            browser.close()
    assert Path(SCREENSHOTS / "sign_in_narrow.png").stat().st_size > 0
