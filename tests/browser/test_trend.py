"""The dated score trend in Chromium at a desktop width and at 400 px: reached from the
overview's sparkline, a dated line per variant with the ROCm upgrade and the coverage drop
marked, hovering a point says its date and counts; no sideways scroll at 400 px. Screenshots:
``trend-<width>.png``."""

import json

import pytest
from playwright.sync_api import expect
from rest_framework.test import APIClient

from parity.models import Backend
from parity.services.projects import project_create, upload_token_create
from tests.browser.conftest import SCREENSHOTS, no_chromium
from tests.browser.layout import page_overflow
from tests.parity.conftest import run_xml
from tests.parity.selectors.test_trends import DAYS, TESTS, VARIANT_DAYS
from tests.uploads import post_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "rocm-trend"
FAILED = ("failed", "boom")


@pytest.fixture(scope="module")
def rocm(site, django_db_blocker):
    """cuda the reference; rocm a family of gfx942 (upgraded 7.13 -> 7.14, then half its tests
    gone) and gfx90a (steady), over four days."""
    with django_db_blocker.unblock():
        project = project_create(
            slug=SLUG, backends=["cuda"], reference="cuda", visibility="public"
        )
        family = Backend.objects.create(project=project, name="rocm")
        for arch in ("gfx942", "gfx90a"):
            Backend.objects.create(project=project, name=f"rocm-{arch}", family=family)
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=project)}")
        for day, (release, ran, passed) in zip(DAYS, VARIANT_DAYS, strict=True):
            uploads = [
                ("cuda", dict.fromkeys(TESTS, "passed"), {}, "10:00"),
                ("rocm-gfx942", {t: "passed" if t in passed else FAILED for t in ran},
                 {"arch": "gfx942", "rocm": release}, "12:00"),
                ("rocm-gfx90a", {t: "passed" if t != TESTS[0] else FAILED for t in TESTS},
                 {"arch": "gfx90a", "rocm": "7.13"}, "12:00"),
            ]  # fmt: skip
            for backend, cases, attributes, time in uploads:
                reply = post_upload(
                    api,
                    (f"{backend}.xml", run_xml(cases)),
                    project=SLUG,
                    backend=backend,
                    commit=f"{day.replace('-', '')}{'0' * 32}",
                    run=f"{day}-{backend}",
                    timestamp=f"{day}T{time}:00Z",
                    complete="true",
                    attributes=json.dumps(attributes),
                )
                assert reply.status_code == 202, reply.content
    return project


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_the_sparkline_opens_a_dated_trend_with_its_marks(page, rocm):
    page.goto("/")
    card = page.locator(f'section[data-project="{SLUG}"]')
    card.locator('a.spark-link[href$="backend=rocm-gfx942"]').click()
    expect(page).to_have_url(f"{page.url.split('/p/')[0]}/p/{SLUG}/trend/?backend=rocm-gfx942")
    # The family: both its variants, one line each.
    page.goto(f"/p/{SLUG}/trend/?backend=rocm")
    chart = page.locator("#trend-chart")
    expect(chart.locator(".scatterlayer .trace")).to_have_count(4)  # 2 lines, 2 kinds of mark
    expect(chart.locator(".legendtext")).to_contain_text(
        ["rocm-gfx90a", "rocm-gfx942", "rocm-gfx942: coverage drop", "rocm-gfx942: attributes"]
    )
    # Plotly's layers lie on one another, its legend inside the chart's box: without its sheet
    # (the strict CSP refuses the <style> it would add) the legend fell below the card.
    box, legend = chart.bounding_box(), chart.locator(".legend").bounding_box()
    assert box["y"] <= legend["y"] and legend["y"] + legend["height"] <= box["y"] + box["height"]
    marks = page.locator('.trend-backend[data-backend="rocm-gfx942"] .trend-marks li')
    expect(marks).to_have_text([
        f"attributes {DAYS[2]}: rocm 7.13 → 7.14 (run {_run(page, 0)})",
        f"coverage drop {DAYS[3]}: coverage dropped to 5 tests (run {_run(page, 1)})",
    ])  # fmt: skip
    # Hovering the last point of gfx942 says its date, score and counts.
    chart.locator(".scatterlayer .trace").nth(1).locator(".point").last.hover(force=True)
    expect(page.locator(".hoverlayer")).to_contain_text(f"{DAYS[3]}: 50.0 %")
    assert page_overflow(page) <= 0
    width = page.viewport_size["width"]
    box = chart.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"trend-{width}.png", full_page=True)


def _run(page, index: int) -> str:
    links = page.locator('.trend-backend[data-backend="rocm-gfx942"] .trend-marks li a')
    return links.nth(index).inner_text().removeprefix("run ")
