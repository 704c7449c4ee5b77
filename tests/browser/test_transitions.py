"""Version transitions in Chromium, on the demo: ``rocm-parity`` moves each ROCm arch from 7.1
to 7.14 (``parity.demo.accelerators``), so each arch's upgrade has its report. The list names
the three; gfx942's report lists as Fail→Pass exactly the SVD tests the demo's generator fails
at 7.1 and passes at 7.14 (computed here from ``rocm_outcome``, not from the engine), each
linking its test page, and the ``rocm < 7.14`` exemption as stopped holding. Read at 1400 px
and at 400 px (no sideways scroll); screenshots in ``screenshots/``."""

import pytest
from playwright.sync_api import expect

from parity.demo.accelerators import CASES, GENERIC_FILE, OLD, UPGRADED, rocm_outcome
from parity.models import Transition
from tests.browser.conftest import SCREENSHOTS, no_chromium

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "rocm-parity"


def _fail_to_pass(arch: str) -> set[str]:
    """The generator's tests that fail (or error) at 7.1 and pass at 7.14 on ``arch``."""
    return {
        case.name  # canonical IDs drop the device (test_svd_cuda_float32 is test_svd_float32)
        for case in CASES
        if case.file != GENERIC_FILE
        and rocm_outcome(case, arch=arch, rocm=OLD)[0] in ("failed", "error")
        and rocm_outcome(case, arch=arch, rocm=UPGRADED)[0] == "passed"
    }


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_the_upgrade_of_each_arch_has_its_report(page, site, request):
    page.goto(f"/p/{SLUG}/runs/")
    page.locator("#transitions-link").click()
    rows = page.locator("#transitions-table tbody tr")
    expect(rows).to_have_count(3)
    for arch in ("gfx942", "gfx90a", "gfx1100"):
        expect(rows.filter(has_text=f"rocm-{arch}")).to_contain_text("rocm 7.1 → 7.14")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{request.node.name}-list.png", full_page=True)

    transition = Transition.objects.get(project__slug=SLUG, backend__name="rocm-gfx942")
    rows.filter(has_text="rocm-gfx942").get_by_role("link").click()
    expect(page.locator("h1")).to_have_text("rocm-gfx942: rocm 7.1 → 7.14")
    expected = _fail_to_pass("gfx942")
    assert expected, "the demo fails SVD at 7.1"
    fixed = page.locator("#fail_to_pass .moved-tests li")
    expect(fixed).to_have_count(len(expected))
    listed = {text.split("::")[-1].split()[0] for text in fixed.all_inner_texts()}
    assert listed == expected
    expect(page.locator('#transition-counts [data-kind="fail_to_pass"] strong')).to_have_text(
        str(len(expected))
    )
    for kind in ("pass_to_fail", "new", "gone"):
        expect(page.locator(f"#{kind}")).to_contain_text("None.")
    expect(page.locator("#lapses")).to_contain_text("rocm < 7.14")
    expect(page.locator("#lapses")).to_contain_text("stopped holding")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")

    # Each test links its page.
    fixed.first.get_by_role("link").click()
    expect(page).to_have_url(f"{site.url}/p/{SLUG}/tests/" + page.url.rsplit("/tests/")[1])
    page.go_back()
    # The run that made it links the report back.
    page.goto(f"/p/{SLUG}/runs/{transition.to_run_id}/")
    expect(page.locator("#transition")).to_contain_text("A version transition: rocm 7.1 → 7.14")
    page.locator("#transition").get_by_role("link", name="The transition report").click()
    expect(page).to_have_url(f"{site.url}/p/{SLUG}/transitions/{transition.pk}/")
