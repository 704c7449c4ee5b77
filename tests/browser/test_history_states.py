"""States from history in Chromium at a desktop and a phone's width (docs/history-states.md):
tpu flips one test run after run (flaky) and fails another in every run (broken). The heatmap's
cell carries the flaky marker (its count, a title saying what it is), the file page's tpu
header the same, the test pages say flaky (flips in runs) and broken (failing steadily since a
run and its commit), and the gaps page marks the broken test's row. Screenshots
``history-<page>-<width>.png`` in ``screenshots/``."""

import re

import pytest
from playwright.sync_api import expect
from rest_framework.test import APIClient

from parity.models import TestCase
from parity.services.projects import project_create, upload_token_create
from tests.browser.conftest import SCREENSHOTS, log_in, no_chromium
from tests.browser.layout import page_overflow
from tests.junit_builder import Case, junit_xml
from tests.uploads import post_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "history"
OPS = "test/test_ops.py"
FLIPS = ("passed", "failed", "passed", "failed", "passed", "failed")


@pytest.fixture(scope="module")
def histories(site, django_db_blocker):
    """cpu passes the three tests; tpu's six runs flip test_add and fail test_mul every time."""
    with django_db_blocker.unblock():
        project = project_create(
            slug=SLUG, backends=["cpu", "tpu"], reference="cpu", visibility="public"
        )
        project.history_rules = {"enabled": True}
        project.save(update_fields=["history_rules"])
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=project)}")

        def upload(backend: str, cases: list, n: int) -> None:
            reply = post_upload(
                api,
                (f"{backend}.xml", junit_xml(*cases)),
                project=SLUG,
                backend=backend,
                commit=f"{n:x}" * 40,
                run=f"{backend}-{n}",
                timestamp=f"2026-06-0{1 + n // 10}T{10 + n % 10:02d}:00:00Z",
                complete="true",
            )
            assert reply.status_code == 202, reply.content

        upload(
            "cpu", [Case("TestOps", t, file=OPS) for t in ("test_add", "test_mul", "test_div")], 0
        )
        for n, add in enumerate(FLIPS, start=1):
            cases = [
                Case("TestOps", "test_add", add, "flaky sum" if add == "failed" else "", file=OPS),
                Case("TestOps", "test_mul", "failed", "wrong product", file=OPS),
                Case("TestOps", "test_div", file=OPS),
            ]
            upload("tpu", cases, n)
    return project


def _screenshot(page, name: str) -> None:
    width = page.viewport_size["width"]
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"history-{name}-{width}.png", full_page=True)


def _no_sideways_scroll(page) -> None:
    overflow = page_overflow(page)
    assert overflow <= 0, f"the page scrolls sideways by {overflow}px"


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_flaky_and_broken_read_on_the_heatmap_test_and_gaps_pages(page, histories):
    page.goto(f"/p/{SLUG}/?sort=name")
    cell = page.locator(f'#heatmap tr[data-name="{OPS}"] td[data-backend="tpu"]')
    marker = cell.locator(".cell-flaky")
    expect(marker).to_have_text("~1")
    expect(marker).to_be_visible()
    expect(marker).to_have_attribute(
        "title",
        "1 of its gaps is flaky: the test flips over the backend's window of runs (states "
        "from history), reported as flaky, not untracked",
    )
    expect(cell.locator("a")).to_have_attribute("title", re.compile(r"· 1 of its gaps is flaky"))
    expect(page.locator("#legend-flaky")).to_contain_text("N of its gaps flaky")
    _no_sideways_scroll(page)
    _screenshot(page, "heatmap")

    page.goto(f"/p/{SLUG}/file/?path={OPS}")
    expect(page.locator("#file-summary thead .cell-flaky")).to_have_text("~1")
    _no_sideways_scroll(page)

    broken = TestCase.objects.get(project=histories, key=f"{OPS}::TestOps::test_mul")
    page.goto(f"/p/{SLUG}/tests/{broken.pk}/")
    line = page.locator('#test-lines tr[data-backend="tpu"]')
    expect(line.locator(".badge.history-broken")).to_have_text("broken since 2026-06-01")
    expect(line.locator(".history-note")).to_contain_text("failing steadily since 2026-06-01 11:00")
    expect(line.locator(".history-note code")).to_contain_text("1111111111")
    expect(page.locator('#test-lines tr[data-backend="cpu"] .history-state')).to_have_count(0)
    _no_sideways_scroll(page)
    _screenshot(page, "test-broken")

    flaky = TestCase.objects.get(project=histories, key=f"{OPS}::TestOps::test_add")
    page.goto(f"/p/{SLUG}/tests/{flaky.pk}/")
    line = page.locator('#test-lines tr[data-backend="tpu"]')
    expect(line.locator(".history-note")).to_contain_text("flips in 6 runs, 3 failed")
    expect(line.locator("td[data-label='Gap'] .badge.history-flaky")).to_have_text("flaky")
    _no_sideways_scroll(page)
    _screenshot(page, "test-flaky")

    page.goto(f"/p/{SLUG}/gaps/?open=1&history=broken")
    rows = page.locator("#new-gaps tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("test_mul")
    expect(rows.first.locator(".badge.history-broken")).to_have_text("broken since 2026-06-01")
    _no_sideways_scroll(page)
    _screenshot(page, "gaps")


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_a_maintainer_previews_new_rules_before_saving_them(page, site, histories):
    """From the compare views' list to the settings of states from history; a preview with a
    longer break and more flips: the broken and the flaky test would read neither, and nothing
    is saved. A rule out of its range is a form error."""
    log_in(page, site)
    page.goto(f"/p/{SLUG}/compare/")
    page.locator("#history-settings-link a").click()
    expect(page.locator("h1")).to_contain_text("States from history")
    expect(page.locator("nav.tabs a[aria-current=page]")).to_have_text("Compare")
    form = page.locator("#rules")
    expect(form.locator("input[name=enabled]")).to_be_checked()
    form.locator("input[name=break_length]").fill("7")
    form.locator("input[name=min_flips]").fill("6")
    form.locator("button[value=preview]").click()
    preview = page.locator("#preview")
    expect(preview.locator("h2")).to_have_text("Preview: 2 states would change")
    rows = preview.locator("#preview-table tbody tr")
    expect(rows).to_have_count(2)
    mul = rows.filter(has_text="test_mul")
    expect(mul.locator("td[data-label='Now'] .badge.history-broken")).to_have_text("broken")
    expect(mul.locator("td[data-label='Would be']")).to_have_text("neither")
    expect(mul.locator("td.sentence")).to_contain_text("6 failed of 6 runs")
    add = rows.filter(has_text="test_add")
    expect(add.locator("td[data-label='Now'] .badge.history-flaky")).to_have_text("flaky")
    expect(add.locator("td.sentence")).to_contain_text("3 failed of 6 runs, 5 flips")
    expect(page.locator("#preview-limits")).to_contain_text("never failed")
    nav = page.locator("nav.tabs")
    if page.viewport_size["width"] >= 1400:  # the nav stays one line
        heights = nav.locator("a").evaluate_all("as => as.map(a => a.getBoundingClientRect().top)")
        assert len(set(heights)) == 1, heights
    _no_sideways_scroll(page)
    _screenshot(page, "settings-preview")
    histories.refresh_from_db()
    assert histories.history_rules == {"enabled": True}

    # Out of its range, the browser refuses it at once (the field's min); past the form's
    # ranges, a break longer than the window is the server's error, on its field.
    form.locator("input[name=break_length]").fill("1")
    expect(form.locator("input[name=break_length]:invalid")).to_have_count(1)
    form.locator("input[name=window_runs]").fill("10")
    form.locator("input[name=break_length]").fill("50")
    form.locator("button[value=save]").click()
    expect(page.locator("#rules .errorlist")).to_contain_text("cannot fit a window of 10 runs")
    _screenshot(page, "settings-error")
    histories.refresh_from_db()
    assert histories.history_rules == {"enabled": True}
