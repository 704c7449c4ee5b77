"""An exemption that passes now, in Chromium, on the demo: a TPU exemption of one test whose
weekly probe run (exempted tests run too, uploaded through the API) passed it is flagged on the
exemptions page; a maintainer removes it behind a confirmation. Screenshots at a desktop width
and at 400 px (``<test>-400px.png``)."""

import pytest
from django.test import override_settings
from playwright.sync_api import expect
from rest_framework.test import APIClient

from parity.models import Gap, ProbeOutcome, Project, Triage
from parity.services.projects import upload_token_create
from parity.services.triage import TriageRequest, triage_create
from tests.browser.conftest import SCREENSHOTS, log_in, no_chromium
from tests.junit_builder import Case, junit_xml
from tests.uploads import post_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "pytorch-xla"
ISSUE = "https://github.com/pytorch/xla/issues/42425"


@pytest.fixture(scope="module")
def probed(site, django_db_blocker, tmp_path_factory) -> Triage:
    """A TPU gap's test exempted, then a probe run of TPU in which it passes, uploaded through
    the API (eager tasks: the probe is recorded when the upload answers)."""
    with django_db_blocker.unblock(), override_settings(MEDIA_ROOT=tmp_path_factory.mktemp("m")):
        project = Project.objects.get(slug=SLUG)
        gap = (
            Gap.objects.filter(
                project=project, backend__name="tpu", is_open=True, tracked=False, intended=False
            )
            .exclude(state="missing")
            .exclude(test__class_name="")  # a script's test: its key comes from its suite's name
            .select_related("test")
            .order_by("test__key")
            .first()
        )
        triage = triage_create(
            project=project,
            request=TriageRequest(
                kind="tracked", test=gap.test_id, backends=["tpu"], issue_url=ISSUE
            ),
        )
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=project)}")
        test = gap.test
        xml = junit_xml(Case(test.class_name, test.name, "passed", file=test.file))
        response = post_upload(
            api, ("probe.xml", xml), project=SLUG, backend="tpu", complete="true", probe="true"
        )
        assert response.status_code == 202, response.content
        assert ProbeOutcome.objects.get(triage=triage, backend__name="tpu").passes_now
    return triage


def test_an_exemption_that_passes_now_is_removed_after_a_confirmation(page, site, probed, request):
    log_in(page, site)
    page.goto(f"/p/{SLUG}/exemptions/?backend=tpu")
    row = page.locator(f'#exemptions-table tr[data-triage="{probed.pk}"]')
    outcome = row.locator('.probe-outcome[data-backend="tpu"]')
    expect(outcome.locator(".badge.passes-now")).to_have_text("passes now")
    expect(outcome).to_contain_text("tpu · 1 of 1 passed")
    # Only the passing ones, with the filter a digest links to.
    page.get_by_label("Probe").select_option(label="passes now")
    page.get_by_role("button", name="Apply").click()
    expect(page.locator("#exemptions-table tbody tr")).to_have_count(1)
    expect(row).to_be_visible()

    row.locator("details.confirm-remove summary").click()
    confirm = row.locator("details.confirm-remove form")
    expect(confirm).to_contain_text("Its tests passed in the last probe on tpu.")
    page.set_viewport_size({"width": 400, "height": 860})
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{request.node.name}-400px.png", full_page=True)
    listing = page.locator("#exemption-list")  # the page's files list below is long
    listing.screenshot(path=SCREENSHOTS / f"{request.node.name}-list-400px.png")
    page.set_viewport_size({"width": 1400, "height": 900})
    listing.screenshot(path=SCREENSHOTS / f"{request.node.name}-list.png")

    confirm.get_by_role("button", name="Yes, remove it").click()
    expect(page.locator(".message.success")).to_contain_text("Exemption removed:")
    expect(page.locator(f'tr[data-triage="{probed.pk}"]')).to_have_count(0)
    assert not Triage.objects.filter(pk=probed.pk).exists()
