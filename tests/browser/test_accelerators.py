"""The demo's two accelerator projects as a user reads them, at 1400 and 400 px: ROCm's arches
against CUDA with AMD's two agreement figures side by side and the family rolled up; the
conditioned SVD exemption that the ROCm 7.14 upgrade made unnecessary; the arch whose report was
cut short, named to rerun; and the out-of-tree backend whose declared exclusions read not
applicable, each with its source."""

import pytest
from playwright.sync_api import expect

from parity.models import BackendState
from tests.browser.conftest import SCREENSHOTS, no_chromium
from tests.browser.layout import page_overflow

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
WIDTHS = pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)


def shot(page, request, name: str) -> None:
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{request.node.name}-{name}.png", full_page=True)


@WIDTHS
def test_rocm_arches_read_by_amds_two_definitions(page, request):
    page.goto("/p/rocm-parity/")
    card = page.locator('.backend-summary li[data-backend="rocm-gfx942"]')
    # The headline agrees only where CUDA passed; "any difference" stands beside it.
    expect(card).to_contain_text("agree where the reference passed")
    expect(card.locator(".score-alternative")).to_contain_text("agree on any difference")
    # gfx90a's last report was cut short: its tests are to rerun, outside the score.
    rerun = page.locator('.backend-summary li[data-backend="rocm-gfx90a"] .rerun')
    expect(rerun).to_contain_text("26 tests to rerun")
    shot(page, request, "project")
    assert page_overflow(page) == 0

    page.goto("/")
    expect(
        page.locator('section[data-project="rocm-parity"] tr.family[data-family="rocm"]')
    ).to_contain_text("3 arches")
    shot(page, request, "overview")
    assert page_overflow(page) == 0


@WIDTHS
def test_the_upgrade_lapses_the_svd_exemption_and_the_cut_report_is_rerun(page, request):
    page.goto("/p/rocm-parity/exemptions/?backend=rocm")
    svd = page.locator("#exemptions-table tr", has_text="test_svd_")
    expect(svd).to_contain_text("rocm < 7.14")
    expect(svd).to_contain_text("lapsed")
    shot(page, request, "exemptions")
    assert page_overflow(page) == 0

    run = BackendState.objects.get(
        backend__project__slug="rocm-parity", backend__name="rocm-gfx90a"
    ).current_run_id
    page.goto(f"/p/rocm-parity/runs/{run}/")
    health = page.locator("#run-health tr", has_text="test/test_nn.py")
    expect(health).to_contain_text("was cut short")
    expect(health).to_contain_text("4 tests, 30 before")
    shot(page, request, "run")
    assert page_overflow(page) == 0


@WIDTHS
def test_an_out_of_tree_backends_exclusions_read_not_applicable(page, request):
    page.goto("/p/openreg/")
    card = page.locator('.backend-summary li[data-backend="openreg"]')
    expect(card).to_contain_text("26 not applicable")
    # SDPA is excluded whole: its file's cell is drawn apart, not as a missing file.
    cell = page.locator(
        '#heatmap tr[data-name="test/test_transformers.py"] td[data-backend="openreg"]'
    )
    expect(cell).to_have_class("cell snot_applicable")
    expect(cell).to_have_text("not applicable · 9")
    expect(page.locator("#legend-not-applicable")).to_be_visible()
    shot(page, request, "heatmap")
    assert page_overflow(page) == 0
    page.goto("/p/openreg/not-applicable/")
    table = page.locator("#declarations-table")
    expect(table).to_contain_text("set_test_configs:torch_openreg/testing.py")
    expect(table.locator("tr", has_text="hw_classification")).to_contain_text("openreg: 4")
    expect(table.locator("tr", has_text="**::TestSDPA::*")).to_contain_text("openreg: 9")
    shot(page, request, "declarations")
    assert page_overflow(page) == 0


@WIDTHS
def test_many_runs_a_day_compare_and_transition(page, request):
    """``rocm-many-runs`` (three days of it here, eight runs a day): gfx90a against CUDA lists
    the quarter-flaky test and the break as extreme, and gfx942's upgrade has its report."""
    from parity.demo.many_runs import BROKEN_TEST, SLUG, UPGRADE_BREAKS, VIEW

    page.goto(f"/p/{SLUG}/compare/{VIEW}/")
    for name in (BROKEN_TEST, "test_compare_cpu_topk_float32"):
        row = page.locator("#compare-table tbody tr", has_text=f"::{name}")
        expect(row).to_have_attribute("data-state", "extreme")
        expect(row).to_contain_text("Fisher p")
    shot(page, request, "compare")
    assert page_overflow(page) == 0

    page.goto(f"/p/{SLUG}/transitions/")
    page.locator("#transitions-table tbody tr", has_text="rocm-gfx942").get_by_role("link").click()
    expect(page.locator("h1")).to_have_text("rocm-gfx942: rocm 7.1 → 7.14")
    expect(page.locator("#fail_to_pass")).to_contain_text("test_svd_float32")
    expect(page.locator("#pass_to_fail")).to_contain_text(UPGRADE_BREAKS)
    shot(page, request, "transition")
    assert page_overflow(page) == 0
