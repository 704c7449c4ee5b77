"""Every page answers with the strict Content-Security-Policy (``parity.web.csp``): scripts and
styles from parity's own files only, nothing inline, no eval. The two pages that relax it do so
for styles or forms only, never for scripts."""

import re

import pytest
from django.contrib.auth import get_user_model

from parity.models import Run, TestCase
from parity.web.csp import HEADER, STRICT_POLICY
from tests.parity.dashboard.conftest import runs
from tests.parity.dashboard_scenario import A, tid

__all__ = ["runs"]  # the fixture: the dashboard scenario's two days
P = "/p/pytorch-xla"


def directives(value: str) -> dict[str, str]:
    pairs = ((part.strip() + " ").split(" ", 1) for part in value.split(";"))
    return {name: rest.strip() for name, rest in pairs}


def pages(xla) -> list[str]:
    test = TestCase.objects.get(project=xla, key=tid(A, 4))
    run = Run.objects.filter(backend__name="tpu").latest("started_at").pk
    return [
        "/",
        f"{P}/",
        f"{P}/?dir=1",
        f"{P}/file/?path={A}&backend=tpu",
        f"{P}/tests/",
        f"{P}/tests/{test.pk}/",
        f"{P}/skip-reasons/",
        f"{P}/queue/",
        f"{P}/gaps/?open=1",
        f"{P}/owners/",
        f"{P}/runs/",
        f"{P}/runs/{run}/",
        f"{P}/matrix/",
        f"{P}/matrix/pair/?a=cpu&b=tpu",
        f"{P}/exemptions/",
        f"{P}/not-applicable/",
        "/api/docs/",
        "/admin/",
        "/admin/parity/project/",
        "/admin/parity/trackingissue/add/",
    ]


@pytest.fixture
def staff(client, db):
    get_user_model().objects.create_superuser("root", password="x" * 12)
    client.login(username="root", password="x" * 12)
    return client


def test_every_page_answers_with_the_strict_policy(staff, runs, xla):
    for page in pages(xla):
        response = staff.get(page)
        assert response.status_code == 200, page
        assert response.headers.get(HEADER) == STRICT_POLICY, page
        html = response.content.decode()
        # What the policy would refuse is not in the page to begin with.
        assert not re.search(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)", html), page
        assert not re.search(r'\sstyle="|<style\b|\son[a-z]+="', html), page


def test_the_policy_allows_only_parity_s_own_scripts_and_styles():
    policy = directives(STRICT_POLICY)

    assert policy["script-src"] == "'self'" and policy["style-src"] == "'self'"
    assert (policy["object-src"], policy["base-uri"], policy["frame-ancestors"]) == (
        "'none'",
        "'none'",
        "'none'",
    )
    assert "unsafe" not in STRICT_POLICY


def test_the_pages_that_relax_it_keep_scripts_strict(client, runs, xla):
    digest = client.get(f"{P}/digest/")
    login = client.get("/accounts/login/")

    assert directives(digest.headers[HEADER])["style-src-attr"] == "'unsafe-inline'"
    assert "form-action" not in directives(login.headers[HEADER])
    for response in (digest, login):
        policy = directives(response.headers[HEADER])
        assert policy["script-src"] == "'self'" and policy["style-src"] == "'self'"


def test_an_api_answer_and_the_sibling_headers(client, runs):
    response = client.get(f"{P}/skip-reasons.json")

    assert response.headers[HEADER] == STRICT_POLICY
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"


def test_the_file_issue_page_may_send_its_form_on_to_the_tracker_only(runs, xla):
    """Its "open the tracker's new-issue page" button posts to parity, which redirects to the
    tracker: browsers check that redirect against form-action."""
    from parity.models import Gap
    from tests.parity.dashboard.conftest import member

    gap = Gap.objects.filter(backend__name="tpu", test__key=tid(A, 4), is_open=True).get()

    page = member(xla, "maintainer").get(f"{P}/file-issue/?gap={gap.pk}")

    policy = directives(page.headers[HEADER])
    assert policy["form-action"] == "'self' https://github.com"
    assert policy["script-src"] == "'self'" and policy["style-src"] == "'self'"
