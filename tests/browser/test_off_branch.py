"""A project that compares main whose CI uploaded complete runs from master only, in Chromium at
a desktop and a phone's width: the heatmap's empty state names both branches and how to change
the one compared, and the overview's backend rows say where their complete runs are."""

import pytest
from playwright.sync_api import expect
from rest_framework.test import APIClient

from parity.services.projects import project_create, upload_token_create
from tests.browser.conftest import no_chromium
from tests.junit_builder import Case, junit_xml
from tests.uploads import post_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "compares-main"


@pytest.fixture(scope="module")
def off_branch(site, django_db_blocker):
    """A project beside the demo's: cpu and tpu each completed a run on master."""
    cases = [Case("TestA", f"test_{i}", file="test/test_a.py") for i in range(3)]
    with django_db_blocker.unblock():
        project = project_create(
            slug=SLUG, backends=["cpu", "tpu"], reference="cpu", visibility="public"
        )
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=project)}")
        for backend in ("cpu", "tpu"):
            response = post_upload(
                api,
                (f"{backend}.xml", junit_xml(*cases)),
                project=SLUG,
                backend=backend,
                branch="master",
                complete="true",
            )
            assert response.status_code == 202, response.content
    return project


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_the_heatmap_names_the_branch_it_compares_and_the_runs_elsewhere(page, off_branch):
    page.goto(f"/p/{SLUG}/")
    empty = page.locator("#no-current-run")
    expect(empty).to_contain_text("No complete run on main yet.")
    expect(empty).to_contain_text(
        "2 complete runs on master: compares-main compares main (and runs sent with no branch), "
        "so they do not count."
    )
    expect(empty).to_contain_text(f"python manage.py update_project {SLUG} --default-branch master")


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_the_overview_says_where_each_backends_complete_runs_are(page, off_branch):
    page.goto("/")
    card = page.locator(f'section[data-project="{SLUG}"]')
    card.scroll_into_view_if_needed()
    for backend in ("cpu", "tpu"):
        expect(card.locator(f'tr[data-backend="{backend}"] td.run')).to_have_text(
            "no complete run on main; 1 on master"
        )
