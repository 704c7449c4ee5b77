"""A compare view in Chromium, on the demo, as a maintainer makes one: the list is one click from
the project's tabs; the new view's form previews before it saves; the report lists the red tests
first, each with its sentence, the same rows and states ``compare_report`` reads from the
database; a state filter narrows it; the red test's page says its state and sentence in the
view; the maintainer makes the overview's headline read from the view, and the overview says so,
with a link. Read at 1400 px and at 400 px (no sideways scroll); screenshots
``<test>-report.png``, ``-400px.png``, ``-test-page.png``, ``-overview.png`` and
``-overview-400px.png`` in ``screenshots/``."""

import pytest
from playwright.sync_api import expect

from parity.models import Backend, CompareView
from parity.pure.compare import CompareState
from parity.result_reads import compare_report
from tests.browser.conftest import SCREENSHOTS, log_in, no_chromium
from tests.browser.layout import page_overflow

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
# The demo's pairs a team would compare, in the order tried: the first with a red test is used.
PAIRS = [
    ("rocm-parity", "rocm-gfx90a", "cuda"),
    ("rocm-parity", "rocm-gfx942", "cuda"),
    ("rocm-parity", "rocm-gfx1100", "cuda"),
    ("pytorch-xla", "tpu", "cpu"),
    ("pytorch-xla", "gpu", "cpu"),
    ("pytorch-xla", "neuron", "cpu"),
]
CONFIDENCE = 90.0  # three demo days, one run a day: 3 failures of 3 against 3 passes is p = 0.05


def _red_pair() -> tuple[str, str, str]:
    for slug, sample, basis in PAIRS:
        backends = {b.name: b for b in Backend.objects.filter(project__slug=slug)}
        if sample not in backends or basis not in backends:
            continue
        probe = CompareView(
            project=backends[sample].project,
            name="probe",
            sample=backends[sample],
            basis=backends[basis],
            confidence=CONFIDENCE,
        )
        if any(r.state.value in ("extreme", "regressed") for r in compare_report(view=probe).rows):
            return slug, sample, basis
    raise AssertionError("no pair of the demo has a red test")


def test_a_maintainer_makes_a_compare_view_and_reads_its_red_tests(page, site, request):
    slug, sample, basis = _red_pair()
    P = f"/p/{slug}"
    log_in(page, site)
    page.goto(f"{P}/")
    page.locator("nav.tabs a", has_text="Compare").click()
    expect(page.locator("h1")).to_contain_text("Compare views")
    form = page.locator("#new-view")
    name = f"{sample}-vs-{basis}"
    form.locator("input[name=name]").fill(name)
    form.locator("select[name=sample]").select_option(sample)
    form.locator("select[name=basis]").select_option(basis)
    form.locator("input[name=confidence]").fill(str(CONFIDENCE))
    form.locator("button", has_text="Preview").click()
    expect(page.locator("#preview h2")).to_contain_text("would change state")
    assert not CompareView.objects.filter(name=name).exists()  # a preview writes nothing

    page.locator("#new-view button", has_text="Save").click()
    expect(page.locator("h1")).to_contain_text(name)
    view = CompareView.objects.get(name=name)
    report = compare_report(view=view)
    rows = page.locator("#compare-table tbody tr")
    expect(rows).to_have_count(min(len(report.rows), 500))
    states = rows.evaluate_all("rs => rs.map(r => r.dataset.state)")
    assert states == [r.state.value for r in report.rows[:500]]
    red = [r for r in report.rows if r.state.value in ("extreme", "regressed")]
    assert red
    first = rows.first
    expect(first.locator(".sentence")).to_have_text(red[0].sentence)
    assert "Fisher p" in red[0].sentence
    SCREENSHOTS.mkdir(exist_ok=True)
    shot = SCREENSHOTS / request.node.name
    page.screenshot(path=f"{shot}-report.png", full_page=False)

    page.locator("#state-filter a[data-state=extreme]").click()
    shown = set(rows.evaluate_all("rs => rs.map(r => r.dataset.state)"))
    assert shown == {"extreme"}

    page.set_viewport_size({"width": 400, "height": 860})
    assert page_overflow(page) <= 0, "scrolls sideways at 400 px"
    page.screenshot(path=f"{shot}-400px.png", full_page=False)
    page.set_viewport_size({"width": 1400, "height": 900})
    expect(page.locator("#compare-computed")).to_contain_text("Computed")

    # The red test's page says its state in the view, with the same sentence.
    page.goto(f"{P}/tests/{red[0].test_id}/")
    line = page.locator(f"#test-compare tr[data-view='{name}']")
    expect(line.locator(".sentence")).to_have_text(red[0].sentence)
    expect(line.locator(".badge")).to_have_text(red[0].state.label)
    line.scroll_into_view_if_needed()
    page.screenshot(path=f"{shot}-test-page.png", full_page=False)

    # The maintainer makes the overview's headline read from the view.
    page.goto(f"{P}/compare/{name}/settings/")
    page.locator("#headline button", has_text="Read the overview's headline").click()
    expect(page.locator("#headline")).to_contain_text("reads from this view")
    page.goto("/")
    headline = page.locator(f"#compare-headline-{slug}")
    red_count = report.counts[CompareState.EXTREME] + report.counts[CompareState.REGRESSED]
    expect(headline).to_contain_text(
        f"{sample} vs {basis} over {view.days} days: {red_count} regressed "
        f"({report.counts[CompareState.EXTREME]} extreme)"
    )
    expect(headline).to_contain_text(f"Read from the compare view {name}")
    headline.scroll_into_view_if_needed()
    page.screenshot(path=f"{shot}-overview.png", full_page=False)
    page.set_viewport_size({"width": 400, "height": 860})
    assert page_overflow(page) <= 0, "the overview scrolls sideways at 400 px"
    page.screenshot(path=f"{shot}-overview-400px.png", full_page=False)
    page.set_viewport_size({"width": 1400, "height": 900})
    headline.locator("a", has_text=name).click()
    expect(page.locator("h1")).to_contain_text(name)
