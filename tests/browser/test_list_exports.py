"""The exemptions page's downloads in Chromium, on the demo: each format's link fetches the
exemptions the page's filters select as that format's file. Screenshots at 1400 and 400 px."""

import pytest
from playwright.sync_api import expect

from parity.models import Triage
from tests.browser.conftest import SCREENSHOTS, no_chromium

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "pytorch-xla"


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_the_exemptions_page_links_each_format_for_its_filters(page, site, request):
    page.goto(f"/p/{SLUG}/exemptions/?backend=tpu")

    links = page.locator("#exemption-export a")
    expect(links).to_have_count(7)
    expect(page.locator("#exemption-export")).to_contain_text("Download these as the list")
    csv = links.filter(has_text="CSV")
    expect(csv).to_be_visible()
    href = csv.get_attribute("href")
    assert href == f"/api/v1/projects/{SLUG}/exemptions/export/amd-csv/?backend=tpu"

    answer = page.request.get(href)
    assert answer.status == 200
    assert answer.headers["content-type"] == "text/csv; charset=utf-8"
    assert answer.headers["content-disposition"] == 'attachment; filename="parity.csv"'
    header, *rows = answer.text().splitlines()
    assert header == "test_file,test_class,test_name,skip_reason,issue,assignee,comments"
    # A row per exemption of one class's test that applies on tpu (naming it, or every
    # backend), counted from the triages themselves.
    one_test = [
        t
        for t in Triage.objects.filter(project__slug=SLUG, match__startswith="**::", expired=False)
        if "*" not in t.match[4:]
        and (not t.backends.exists() or t.backends.filter(name="tpu").exists())
    ]
    assert one_test and len(rows) == len(one_test)
    assert {",".join(r.split(",")[1:3]) for r in rows} == {
        ",".join(t.match.split("::")[1:]) for t in one_test
    }
    page.locator("#exemption-export").scroll_into_view_if_needed()
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{request.node.name}-links.png")
