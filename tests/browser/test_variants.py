"""Conditioned exemptions on the exemptions page, in Chromium, on the demo: TPU's next run is
uploaded with its runtime's version (``libtpu=0.0.21``); an exemption for older runtimes reads
lapsed, saying what the current run carries, and one that still holds shows only its
condition. A maintainer writes a condition in the form, and a bad one is refused beside the
field. Screenshots at 1400 px and at 400 px (``<test>-400px.png``)."""

import json

import pytest
from django.test import override_settings
from playwright.sync_api import expect
from rest_framework.test import APIClient

from parity.models import Project, Run, Triage
from parity.services.projects import upload_token_create
from parity.services.triage import TriageRequest, triage_create
from tests.browser.conftest import SCREENSHOTS, log_in, no_chromium
from tests.junit_builder import Case, junit_xml
from tests.uploads import post_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "pytorch-xla"
ISSUE = "https://github.com/pytorch/xla/issues/42426"
OLD_RUNTIME = "libtpu < 0.0.21"
NEW_RUNTIME = "libtpu >= 0.0.21 and chip in (v5e, v6e)"


@pytest.fixture(scope="module")
def conditioned(site, django_db_blocker, tmp_path_factory) -> tuple[Triage, Triage]:
    """TPU's next run, sent with attributes through the API, and two conditioned exemptions."""
    with django_db_blocker.unblock(), override_settings(MEDIA_ROOT=tmp_path_factory.mktemp("m")):
        project = Project.objects.get(slug=SLUG)
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=project)}")
        xml = junit_xml(Case("TestOps", "test_add", "passed", file="test/test_ops.py"))
        response = post_upload(
            api,
            ("tpu.xml", xml),
            project=SLUG,
            backend="tpu",
            commit="9" * 40,
            complete="true",
            attributes=json.dumps({"libtpu": "0.0.21", "chip": "v5e"}),
        )
        assert response.status_code == 202, response.content
        run = Run.objects.get(pk=response.json()["run"])
        assert run.attributes == {"libtpu": "0.0.21", "chip": "v5e"}
        made = [
            triage_create(
                project=project,
                request=TriageRequest(
                    kind="tracked",
                    backends=["tpu"],
                    match=f"test/test_ops.py::TestOps::{name}",
                    issue_url=ISSUE,
                    note=note,
                    condition=condition,
                ),
            )
            for name, note, condition in (
                ("test_sub", "fixed in libtpu 0.0.21", OLD_RUNTIME),
                ("test_mul", "v5e/v6e runtime regression", NEW_RUNTIME),
            )
        ]
    return made[0], made[1]


def narrow_screenshot(page, request) -> None:
    page.set_viewport_size({"width": 400, "height": 800})
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{request.node.name}-400px.png", full_page=True)
    page.set_viewport_size({"width": 1400, "height": 900})


def test_a_conditioned_exemption_an_upgrade_outran_reads_lapsed(page, site, conditioned, request):
    lapsed, holding = conditioned
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"/p/{SLUG}/exemptions/?backend=tpu")

    old = page.locator(f'#exemptions-table tr[data-triage="{lapsed.pk}"]')
    expect(old.locator("td.condition, .condition")).to_have_text(f"where {OLD_RUNTIME}")
    expect(old.locator(".badge.lapsed")).to_be_visible()
    expect(old.locator(".lapse")).to_have_text(
        f"lapsed: {OLD_RUNTIME} holds on no current run of the backends it names "
        "(tpu: libtpu=0.0.21); remove it"
    )
    new = page.locator(f'#exemptions-table tr[data-triage="{holding.pk}"]')
    expect(new.locator(".condition")).to_have_text(f"where {NEW_RUNTIME}")
    expect(new.locator(".badge.lapsed")).to_have_count(0)
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{request.node.name}.png", full_page=True)
    # The two rows alone, to read them at each width.
    old.screenshot(path=SCREENSHOTS / f"{request.node.name}-row.png")
    narrow_screenshot(page, request)
    page.set_viewport_size({"width": 400, "height": 800})
    old.screenshot(path=SCREENSHOTS / f"{request.node.name}-row-400px.png")
    page.set_viewport_size({"width": 1400, "height": 900})


def test_the_form_refuses_a_condition_naming_where_then_saves_one(page, site, conditioned, request):
    log_in(page, site)
    page.goto(f"/p/{SLUG}/exemptions/")
    form = page.locator("#new-exemption")
    form.locator("summary").click()
    form.get_by_label("Tests").fill("test/test_ops.py::TestOps::test_div")
    form.get_by_label("tpu").check()
    form.get_by_label("intended").check()
    form.get_by_label("Note").fill("no float64 division on this runtime")
    form.get_by_label("Condition").fill("libtpu < latest")
    form.get_by_role("button", name="Save exemption").click()

    error = page.locator("#new-exemption .errorlist")
    expect(error).to_contain_text("ordering compares versions")
    expect(error).to_contain_text("(at character 10)")
    expect(form.get_by_label("Condition")).to_have_value("libtpu < latest")  # kept, to correct
    narrow_screenshot(page, request)

    form.get_by_label("Condition").fill("libtpu < 0.0.22")
    page.get_by_role("button", name="Save exemption").click()
    expect(page.locator(".message.success")).to_contain_text("Exemption saved")
    saved = Triage.objects.get(match="test/test_ops.py::TestOps::test_div")
    assert saved.condition == "libtpu < 0.0.22"
    row = page.locator(f'#exemptions-table tr[data-triage="{saved.pk}"]')
    expect(row.locator(".condition")).to_have_text("where libtpu < 0.0.22")
    expect(row.locator(".badge.lapsed")).to_have_count(0)
