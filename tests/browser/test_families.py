"""Families in Chromium at a desktop and a phone's width: the overview's family line above its
arches, the heatmap by family (the switch, a family's worst-arch cell), and the gaps list's
"also failing in" (``tests/parity/families_scenario.py``: rocm of three arches, tpu flat)."""

import pytest
from playwright.sync_api import expect
from rest_framework.test import APIClient

from parity.services.projects import project_create, upload_token_create
from tests.browser.conftest import SCREENSHOTS, no_chromium
from tests.browser.layout import page_overflow
from tests.parity.conftest import run_xml
from tests.parity.families_scenario import RUNS, VARIANTS, A, family_add
from tests.uploads import post_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "amd"


# A test named as PyTorch's parametrized tests are, failing on two arches: its row in the
# family's table must wrap at 400 px, its arches in view, never scroll sideways.
LONG = (
    "test/test_ops.py::TestCommonCUDA::"
    "test_noncontiguous_samples_nn_functional_scaled_dot_product_attention_cuda_float32"
)
LONG_RUNS = {
    "cpu": {LONG: "passed"},
    "rocm-gfx942": {LONG: ("failed", "boom")},
    "rocm-gfx90a": {LONG: ("failed", "boom")},
    "rocm-navi31": {LONG: "passed"},
    "tpu": {LONG: "passed"},
}


@pytest.fixture(scope="module")
def amd(site, django_db_blocker):
    with django_db_blocker.unblock():
        project = project_create(
            slug=SLUG, backends=["cpu", "tpu"], reference="cpu", visibility="public"
        )
        family_add(project)
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=project)}")
        for backend, cases in RUNS.items():
            cases = {**cases, **LONG_RUNS[backend]}
            reply = post_upload(
                api,
                (f"{backend}.xml", run_xml(cases)),
                project=SLUG,
                backend=backend,
                commit="c" * 40,
                run=f"{backend}-c",
                timestamp="2026-06-01T10:00:00Z",
                complete="true",
            )
            assert reply.status_code == 202, reply.content
    return project


def _screenshot(page, name: str) -> None:
    width = page.viewport_size["width"]
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"families-{name}-{width}.png", full_page=True)


def _no_sideways_scroll(page) -> None:
    overflow = page_overflow(page)
    assert overflow <= 0, f"the page scrolls sideways by {overflow}px"


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_the_overview_rolls_rocm_up_above_its_arches(page, amd):
    page.goto("/")
    card = page.locator(f'section[data-project="{SLUG}"]')
    family = card.locator('tr.family[data-family="rocm"]')
    expect(family).to_contain_text(
        "3 arches; scores 50 %; 1 test fails on every arch, 5 on some"  # all 3 of 6
    )
    expect(card.locator("tr.variant")).to_have_count(3)
    expect(card.locator("tbody tr th")).to_have_text(
        ["cpu reference", "rocm family", *sorted(VARIANTS), "tpu"]
    )
    _no_sideways_scroll(page)
    card.screenshot(path=SCREENSHOTS / f"families-overview-{page.viewport_size['width']}.png")


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_the_heatmap_by_family_draws_rocm_as_its_worst_arch(page, amd):
    page.goto(f"/p/{SLUG}/")
    switch = page.locator("#heatmap-by")
    expect(switch.locator("[aria-current]")).to_have_text("by variant")
    expect(page.locator("#heatmap thead th.col")).to_have_count(5)  # cpu, three arches, tpu
    switch.get_by_text("by family").click()
    expect(page).to_have_url(f"{page.url.split('?')[0]}?by=family")
    expect(page.locator("#heatmap thead th.col")).to_have_count(3)  # cpu, rocm, tpu
    cell = page.locator(f'#heatmap tr[data-name="{A}"] td[data-backend="rocm"]')
    # navi31 passes none of the three; all three arches have gaps.
    expect(cell).to_have_text("0/3 on 3 of 3 arches")
    expect(cell.locator("a")).to_have_attribute(
        "href", f"/p/{SLUG}/file/?path={A}&backend=rocm-navi31"
    )
    spread = page.locator('.family-tests[data-family="rocm"] tbody tr')
    expect(spread).to_have_count(5)  # the tests some arch fails, the most arches first
    expect(spread.first).to_contain_text("3 of 3: rocm-gfx90a, rocm-gfx942, rocm-navi31")
    _no_sideways_scroll(page)
    _screenshot(page, "heatmap")
    # Every cell of the family's tables in view, none in a box that scrolls sideways.
    width = page.viewport_size["width"]
    long = spread.filter(has_text="scaled_dot_product")
    expect(long).to_contain_text("2 of 3: rocm-gfx90a, rocm-gfx942")
    for table in ("#heatmap", '.family-tests[data-family="rocm"] table'):
        scrolls = page.eval_on_selector(table, "t => t.scrollWidth - t.clientWidth")
        assert scrolls <= 0, f"{table} scrolls sideways by {scrolls}px at {width}px"
    for cell in long.locator("td").all():
        box = cell.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width, box


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_the_gaps_list_says_also_failing_in(page, amd):
    page.goto(f"/p/{SLUG}/gaps/?open=1&backend=rocm-gfx942")
    row = page.locator("#new-gaps tbody tr").filter(has_text=f"{A}::TestX::test_1")
    expect(row.locator(".also-failing")).to_have_text(
        "fails on 3 of 3 rocm arches · also failing in rocm-gfx90a, rocm-navi31, tpu"
    )
    _no_sideways_scroll(page)
    _screenshot(page, "gaps")
