"""Commit cadence in Chromium at a desktop and a phone's width: a file the reference added in a
newer commit than TPU's current run reads "not yet run there" (grey, no gap) on the heatmap, the
file page and the test page, and the aligned-commits toggle compares TPU at the commit both
ran, on the heatmap and the gaps page."""

import re

import pytest
from playwright.sync_api import expect
from rest_framework.test import APIClient

from parity.models import TestCase
from parity.services.projects import project_create, upload_token_create
from tests.browser.conftest import SCREENSHOTS, no_chromium
from tests.browser.layout import page_overflow
from tests.junit_builder import Case, junit_xml
from tests.uploads import post_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "cadence"
OPS, NEW = "test/test_ops.py", "test/test_new.py"
COMMIT_A, COMMIT_B = "a" * 40, "b" * 40


@pytest.fixture(scope="module")
def cadence(site, django_db_blocker):
    """cpu ran commit A, then B (which adds test_new.py); tpu's current run is of commit A."""
    ops = [Case("TestOps", "test_add", file=OPS), Case("TestOps", "test_mul", file=OPS)]
    new = [Case("TestNew", "test_one", file=NEW), Case("TestNew", "test_two", file=NEW)]
    tpu = [ops[0], Case("TestOps", "test_mul", "skipped", "no mul kernel", file=OPS)]
    with django_db_blocker.unblock():
        project = project_create(
            slug=SLUG, backends=["cpu", "tpu"], reference="cpu", visibility="public"
        )
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=project)}")
        for backend, cases, commit, at in (
            ("cpu", ops, COMMIT_A, "2026-06-01T10:00:00Z"),
            ("tpu", tpu, COMMIT_A, "2026-06-01T11:00:00Z"),
            ("cpu", ops + new, COMMIT_B, "2026-06-02T10:00:00Z"),
        ):
            reply = post_upload(
                api,
                (f"{backend}.xml", junit_xml(*cases)),
                project=SLUG,
                backend=backend,
                commit=commit,
                run=f"{backend}-{commit[0]}",
                timestamp=at,
                complete="true",
            )
            assert reply.status_code == 202, reply.content
    return project


def _screenshot(page, name: str) -> None:
    """A page the test passes through, beside the fixture's screenshot of the last one."""
    width = page.viewport_size["width"]
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"pending-{name}-{width}.png", full_page=True)


def _no_sideways_scroll(page) -> None:
    overflow = page_overflow(page)
    assert overflow <= 0, f"the page scrolls sideways by {overflow}px"


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_a_file_the_reference_added_reads_not_yet_run_there(page, cadence):
    page.goto(f"/p/{SLUG}/?sort=name")
    cell = page.locator('#heatmap tr[data-name="test/test_new.py"] td[data-backend="tpu"]')
    expect(cell).to_have_text("not yet run there · 2")
    expect(cell).to_have_class(re.compile(r"^cell snone\s+pending$"))  # no shade, grey
    expect(cell.locator("a")).to_have_attribute("title", "tpu · test/test_new.py: none of these "
        "tests in the current run · 2 not yet run there: the reference first ran them after this "
        "backend's current run")  # fmt: skip
    expect(page.locator('.backend-summary li[data-backend="tpu"] .pending')).to_have_text(
        "2 not yet run there"
    )
    _no_sideways_scroll(page)
    _screenshot(page, "heatmap")

    page.goto(f"/p/{SLUG}/file/?path={NEW}")
    tpu = page.locator('#file-grid td[data-backend="tpu"]')
    expect(tpu).to_have_count(2)
    expect(tpu.first).to_contain_text("not yet run there")
    expect(page.locator("#file-summary")).to_contain_text("not yet run there")
    _no_sideways_scroll(page)
    _screenshot(page, "file")

    test = TestCase.objects.get(project=cadence, key=f"{NEW}::TestNew::test_one")
    page.goto(f"/p/{SLUG}/tests/{test.pk}/")
    line = page.locator('tr[data-backend="tpu"]')
    expect(line.locator(".outcome")).to_contain_text("not yet run there")
    expect(line.locator(".pending-note")).to_contain_text(
        "a gap only if a run of tpu at least as new"
    )
    _no_sideways_scroll(page)


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_the_aligned_toggle_compares_tpu_at_the_commit_both_ran(page, cadence):
    page.goto(f"/p/{SLUG}/?sort=name")
    page.locator("#aligned-toggle").get_by_text("aligned commits").click()
    expect(page).to_have_url(f"{page.url.split('?')[0]}?sort=name&aligned=1")
    expect(page.locator("#aligned-note")).to_be_visible()
    expect(page.locator('.backend-summary li[data-backend="tpu"]')).to_contain_text(
        f"aligned at {COMMIT_A[:10]}"
    )
    # At commit A the reference had no test_new.py: only test_ops.py is compared.
    expect(page.locator('#heatmap td[data-backend="tpu"]')).to_have_text(["1/2"])
    _no_sideways_scroll(page)
    _screenshot(page, "aligned-heatmap")

    page.goto(f"/p/{SLUG}/gaps/?open=1")
    page.locator("#aligned-toggle").get_by_text("aligned commits").click()
    expect(page.locator('#aligned-commits li[data-backend="tpu"]')).to_contain_text(
        f"tpu at {COMMIT_A[:10]}"
    )
    rows = page.locator("#aligned-gaps tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("test_mul")
    expect(rows.first.locator(".state")).to_have_text("skipped")
    _no_sideways_scroll(page)
    _screenshot(page, "aligned-gaps")
    page.locator("#aligned-toggle").get_by_text("current runs").click()
    expect(page.locator("#new-gaps")).to_be_visible()
