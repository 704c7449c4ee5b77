"""Every page of the demo, read in Chromium at a desktop width and at 400 px: it answers, shows
no template source (in its HTML or its visible text), logs no console error, asks no host but its
own (the ``page`` fixture checks those three), draws its charts with data, and at 400 px does
not scroll sideways as a whole (a wide table scrolls inside its own box). Each leaves
``screenshots/test_every_page_reads_cleanly[<width>-<page>].png``."""

from urllib.parse import quote

import pytest
from playwright.sync_api import expect

from parity import selectors
from parity.models import Gap, Project
from tests.browser.conftest import no_chromium

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "pytorch-xla"
P = f"/p/{SLUG}"
PAGES = (
    "overview",
    "heatmap",
    "heatmap-folders",
    "file",
    "test",
    "skip-reasons",
    "queue",
    "gaps",
    "exemptions",
    "matrix",
    "pair",
    "runs",
    "digest",
    "api-docs",
    "login",
)
# Pages with Plotly charts: the selector of each chart's node, and how many there are.
CHARTS = {"overview": (".spark", 3), "skip-reasons": ("#reason-chart", 1)}


def url_of(name: str) -> str:
    project = Project.objects.get(slug=SLUG)
    if name == "file":
        worst = selectors.heatmap(project=project, sort="tpu").rows[0].name
        return f"{P}/file/?path={quote(worst)}&backend=tpu"
    if name == "test":
        gap = Gap.objects.filter(project=project, is_open=True).order_by("pk").first()
        return f"{P}/tests/{gap.test_id}/"
    return {
        "overview": "/",
        "heatmap": f"{P}/",
        "heatmap-folders": f"{P}/?dir=1",
        "skip-reasons": f"{P}/skip-reasons/",
        "queue": f"{P}/queue/",
        "gaps": f"{P}/gaps/?open=1",
        "exemptions": f"{P}/exemptions/",
        "matrix": f"{P}/matrix/",
        "pair": f"{P}/matrix/pair/?a=cpu&b=tpu",
        "runs": f"{P}/runs/",
        "digest": f"{P}/digest/",
        "api-docs": "/api/docs/",
        "login": "/accounts/login/",
    }[name]


@pytest.mark.parametrize("name", PAGES)
@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_every_page_reads_cleanly(page, name):
    response = page.goto(url_of(name))

    assert response.status == 200, f"{name}: {response.status}"
    if name == "api-docs":
        expect(page.locator(".swagger-ui .info .title")).to_contain_text("parity")
    else:
        expect(page.locator("h1").first).to_be_visible()
    if name in CHARTS:
        selector, count = CHARTS[name]
        expect(page.locator(f"{selector} .main-svg").first).to_be_visible()
        points = page.eval_on_selector_all(
            selector,
            "els => els.map(el => (el.data || []).reduce("
            "(n, trace) => n + (trace.y || []).filter(y => y !== null).length, 0))",
        )
        assert len(points) >= count and all(points), f"{name}: a chart without data: {points}"
    if page.viewport_size["width"] < 600:
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"{name} scrolls sideways by {overflow}px at 400px"
