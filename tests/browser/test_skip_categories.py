"""Skip categories in Chromium, on the demo: the reasons page's rows and its by-category card
say what the Reason rows and current skips say, the chart stacks one trace per category, and
the queue's reason groups carry their reason's category; at 400 px neither page scrolls
sideways. Screenshots at 1400 px (the fixture's) and 400 px (``<test>-400px.png``)."""

from collections import Counter

import pytest
from playwright.sync_api import expect

from parity.models import CurrentOutcome, Outcome, Project, Reason
from parity.selectors import skip_rules_current
from tests.browser.conftest import SCREENSHOTS, no_chromium
from tests.browser.layout import page_overflow
from tests.browser.test_every_page import _SIDEWAYS
from tests.browser.test_exemptions import narrow_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "pytorch-xla"


def skipped_per_category() -> Counter:
    """Skipped tests of the current runs per category, from the outcome rows."""
    rows = CurrentOutcome.objects.filter(project__slug=SLUG, outcome=Outcome.SKIPPED).values_list(
        "reason__kind", "reason__category"
    )
    return Counter(
        "no reason given" if kind is None else (category or "uncategorized")
        for kind, category in rows
        if kind in (None, "skip")
    )


def section_screenshots(page, request, *selectors: str) -> None:
    """The sections at 400 px, each on its own (the full page is long to read)."""
    page.set_viewport_size({"width": 400, "height": 800})
    page.wait_for_timeout(300)  # the chart redraws to the new width
    for selector in selectors:
        name = selector.strip("#")
        page.locator(selector).screenshot(
            path=SCREENSHOTS / f"{request.node.name}-{name}-400px.png"
        )
    page.set_viewport_size({"width": 1400, "height": 900})


@pytest.mark.parametrize("page", ["narrow"], indirect=True)
@pytest.mark.parametrize("path", ["skip-reasons", "queue"])
def test_at_400px_categories_fit_without_sideways_scrolling(page, path, request):
    page.goto(f"/p/{SLUG}/{path}/")
    expect(page.locator("div.category, td.category").first).to_be_visible()
    if path == "skip-reasons":  # drawn at 400 px: a legend line per category, none hidden
        chart = page.locator("#reason-chart")
        expect(chart.locator(".main-svg").first).to_be_visible()
        chart.screenshot(path=SCREENSHOTS / f"{request.node.name}-chart.png")
        assert chart.locator(".legend .scrollbar").count() == 0 or chart.evaluate(
            "el => el.querySelector('.legend .scrollbar').getBBox().height === 0"
        )
    overflow = page_overflow(page)
    assert overflow <= 0, f"{path} scrolls sideways by {overflow}px at 400px"
    assert page.eval_on_selector_all("main *", _SIDEWAYS) == []


def test_the_reasons_page_shows_each_reasons_category_and_counts_them(page, request):
    page.goto(f"/p/{SLUG}/skip-reasons/")
    categories = dict(Reason.objects.values_list("pk", "category"))
    rows = page.locator("#reasons-table tbody tr")
    shown = rows.evaluate_all(
        "rows => rows.map(r => [r.dataset.reason, r.querySelector('td.category').dataset.category])"
    )
    assert shown, "the demo skips tests"
    for reason, category in shown:
        expected = "no reason given" if reason == "none" else categories[int(reason)]
        assert category == expected, reason
    # The demo's skip messages are PyTorch/XLA's: most of them have a category.
    assert sum(1 for _, c in shown if c) > len(shown) / 2

    card = page.locator("#categories-table tbody tr")
    counted = {
        card.nth(i).get_attribute("data-category"): int(
            card.nth(i).locator("td").nth(1).inner_text().replace(",", "")
        )
        for i in range(card.count())
    }
    assert counted == skipped_per_category()

    chart = page.locator("#reason-chart")
    expect(chart.locator(".main-svg").first).to_be_visible()
    body = page.request.get(chart.get_attribute("data-url")).json()
    assert body["by"] == "category"
    expect(chart.locator(".scatterlayer .trace")).to_have_count(len(body["series"]))
    # Its 28 days may hold categories no current run skips any more: the rules' categories.
    rules = {
        rule.category for rule in skip_rules_current(project=Project.objects.get(slug=SLUG)).rules
    }
    assert {s["name"] for s in body["series"]} <= rules | {"uncategorized"}
    section_screenshots(page, request, "#reason-chart", "#skip-categories")
    narrow_screenshot(page, request)
    page.wait_for_timeout(300)  # the chart redraws at 1400 px for the fixture's screenshot


def test_the_queue_shows_each_reason_groups_category(page, request):
    page.goto(f"/p/{SLUG}/queue/")
    categories = dict(Reason.objects.values_list("pk", "category"))
    groups = page.locator("#queue-reasons tbody tr")
    assert groups.count() > 0, "the demo has untracked gaps with reasons"
    for i in range(groups.count()):
        row = groups.nth(i)
        expected = categories[int(row.get_attribute("data-reason"))]
        tag = row.locator("div.category")
        if expected:
            expect(tag).to_have_attribute("data-category", expected)
        else:
            expect(tag).to_have_count(0)
    section_screenshots(page, request, "#queue-reasons")
    narrow_screenshot(page, request)
