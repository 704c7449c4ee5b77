"""Code owners in Chromium, on the demo (its illustrative ``parity/demo/CODEOWNERS``, imported
before its uploads, so each run's recompute gave its files their owners): the queue's groups and
the gaps list show each file's owners, an owner's link filters the list to exactly that owner's
gaps (counted here with the pure matcher), and the owners page says what the rules cover.
Screenshots at 1400 px (the fixture's) and 400 px (``<test>-400px.png``)."""

import re

import pytest
from playwright.sync_api import expect

from parity.management.commands.load_demo import OWNERS
from parity.models import FileOwners, Gap, GapState
from parity.pure.codeowners import codeowners_parse, owners_of
from tests.browser.conftest import no_chromium
from tests.browser.layout import page_overflow
from tests.browser.test_exemptions import narrow_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "pytorch-xla"
P = f"/p/{SLUG}"
RULES = codeowners_parse(OWNERS.read_text()).rules


def owners(file: str) -> list[str]:
    rule = owners_of(RULES, file)
    return list(rule.owners) if rule else []


def _no_sideways(page) -> None:
    overflow = page_overflow(page)
    assert overflow <= 0, f"scrolls sideways by {overflow}px at 400px"


def test_the_queue_shows_each_file_groups_owners(page, request):
    page.goto(f"{P}/queue/")

    rows = page.locator("#queue-files tbody tr")
    expect(rows.first).to_be_visible()
    for i in range(min(rows.count(), 20)):
        row = rows.nth(i)
        shown = row.locator("td.path a.owner").all_inner_texts()
        assert shown == owners(row.get_attribute("data-file")), row.get_attribute("data-file")
    assert page.locator("#queue-files a.owner").count() > 0
    narrow_screenshot(page, request)


def test_an_owners_link_filters_the_gaps_to_exactly_their_gaps(page, request):
    owner = "@xla-demo/spmd"
    expected = [
        gap
        for gap in Gap.objects.filter(project__slug=SLUG, is_open=True)
        .exclude(state=GapState.REFERENCE_MISSING)
        .select_related("test")
        if owner in owners(gap.test.file)
    ]
    assert expected  # the demo's SPMD tests have gaps
    page.goto(f"{P}/gaps/?open=1")
    page.locator("#new-gaps a.owner", has_text=owner).first.click()

    expect(page.locator("#owner-filter")).to_contain_text(
        f"Only the gaps of the test files {owner} owns"
    )
    badge = page.locator("#new-gaps h2 .badge").inner_text()
    assert int(badge.replace(",", "")) == len(expected)
    for text in page.locator("#new-gaps td.test").all_inner_texts():
        assert owner in text
    narrow_screenshot(page, request)


def test_the_owners_page_says_what_the_rules_cover(page, request):
    page.goto(f"{P}/owners/")

    files = FileOwners.objects.filter(project__slug=SLUG)
    owned = sum(1 for f in files if f.owners)
    assert owned == sum(1 for f in files if owners(f.file))  # the roll-up is the matcher's
    expect(page.locator("#owners-coverage")).to_have_text(f"{owned} of {files.count()}")
    spmd = page.locator('tr[data-owner="@xla-demo/spmd"] td').nth(1)
    assert int(spmd.inner_text()) == sum(1 for f in files if "@xla-demo/spmd" in f.owners)
    narrow_screenshot(page, request)


@pytest.mark.parametrize("page", ["narrow"], indirect=True)
@pytest.mark.parametrize(
    "url",
    ["queue/", "gaps/?open=1", "owners/", "?owner=@xla-demo/spmd"],
    ids=["queue", "gaps", "owners", "heatmap-of-an-owner"],
)
def test_at_400px_owner_pages_do_not_scroll_sideways(page, url):
    page.goto(f"{P}/{url}")

    expect(page.locator("h1").first).to_be_visible()
    _no_sideways(page)
    assert re.search(r"@xla-demo/", page.locator("main").inner_text())
