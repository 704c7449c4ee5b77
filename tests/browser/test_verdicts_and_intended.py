"""What the demo's pages say at a glance, at 1400 and 400 px: a heatmap cell whose every gap an
exemption intends is hatched grey with a legend entry (not the dark colour of a failure), and
the backend cards give the score without intended gaps with the raw one beside it; the runs
list says each run's verdict; a file a backend never ran is one row on its page; the nav fits
one line at 1400 px and the owners page lights its own tab."""

from urllib.parse import quote

import pytest
from playwright.sync_api import expect

from parity import selectors
from parity.dashboard import presenters
from parity.models import Project
from tests.browser.conftest import SCREENSHOTS, log_in, no_chromium
from tests.browser.layout import page_overflow

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "pytorch-xla"
WIDTHS = pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)


def _cells():
    heatmap = presenters.heatmap_cells(selectors.heatmap(project=Project.objects.get(slug=SLUG)))
    return heatmap, [(row, cell) for row in heatmap.rows for cell in row.cells]


def _screen(page, request, name: str) -> None:
    """What the window shows now (the full page's screenshot is too tall to read a cell in)."""
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{request.node.name}-{name}.png")


@WIDTHS
def test_intended_cells_are_drawn_apart_and_scores_leave_them_out(page, request):
    heatmap, cells = _cells()
    row, cell = next((r, c) for r, c in cells if c.all_intended)
    page.goto(f"/p/{SLUG}/")
    shown = page.locator(f'#heatmap tr[data-name="{row.name}"] td[data-backend="{cell.backend}"]')
    expect(shown).to_have_class("cell sintended")
    expect(shown).to_have_text(cell.label)
    assert cell.label.startswith("intended · ") or " intended" in cell.label
    # Hatched grey, not the parity scale's darkest brown.
    background = shown.evaluate("td => getComputedStyle(td).backgroundColor")
    assert background == "rgb(244, 244, 246)"
    expect(page.locator("#legend-intended")).to_be_visible()
    # Each card: the headline score, and the raw one beside it where it reads otherwise (the
    # demo's tpu: 53 intended gaps).
    shown_raw = 0
    for backend in heatmap.backends[1:]:
        card = page.locator(f'.backend-summary li[data-backend="{backend.backend}"]')
        headline = presenters.percent(backend.scores.headline)
        raw = presenters.percent(backend.scores.raw)
        expect(card.locator(".score-headline")).to_have_text(headline)
        expect(card.locator(".score-raw")).to_have_count(int(raw != headline))
        if raw != headline:
            shown_raw += 1
            expect(card.locator(".score-raw")).to_have_text(
                f"{raw} counting {backend.scores.intended:,} intended"
            )
    assert shown_raw
    assert page_overflow(page) == 0
    _screen(page, request, "top")
    shown.scroll_into_view_if_needed()
    _screen(page, request, "cell")


@WIDTHS
def test_the_runs_list_says_each_runs_verdict(page, request):
    project = Project.objects.get(slug=SLUG)
    runs = selectors.runs_page(project=project).rows
    page.goto(f"/p/{SLUG}/runs/")
    judged = [row for row in runs if row.verdict.judged and row.verdict.opened]
    assert judged, "the demo's first page has a run that opened gaps"
    for row in judged[:5]:
        verdict = page.locator(f"#run-{row.run.pk} td.verdict")
        expect(verdict).to_contain_text(f"+{row.verdict.opened:,} gap")
        if row.verdict.untracked:
            expect(verdict).to_contain_text(f"({row.verdict.untracked:,} untracked)")
    # Each count is named by its own column's word, also where the headers are hidden (400 px).
    counts = runs[0].counts
    labelled = page.locator(f"#run-{runs[0].run.pk} td.num").evaluate_all(
        "tds => tds.map(td => [getComputedStyle(td, '::before').content, td.innerText])"
    )
    if page.viewport_size["width"] < 600:
        words = [word.strip('"') for word, _ in labelled]
        assert words == ["tests", "passed", "skipped", "failed", "error"]
    numbers = [int(text.split()[-1]) for _, text in labelled]
    assert numbers == [counts[k] for k in ("total", "passed", "skipped", "failed", "error")]
    assert page_overflow(page) == 0
    _screen(page, request, "top")


@WIDTHS
def test_a_file_a_backend_never_ran_is_one_row(page):
    _, cells = _cells()
    row, cell = max(
        ((r, c) for r, c in cells if c.absent and not c.all_intended), key=lambda rc: rc[1].missing
    )
    page.goto(f"/p/{SLUG}/file/?path={quote(row.name)}&backend={cell.backend}")
    grid = page.locator("#file-grid tbody tr")
    expect(grid).to_have_count(1)
    expect(grid).to_contain_text(f"missing on {cell.backend}: {cell.missing} test")
    assert page.evaluate("document.documentElement.scrollHeight") < 2000
    assert page_overflow(page) == 0


@pytest.mark.parametrize("logged_in", [False, True])
def test_the_nav_is_one_line_at_1400px_and_owners_is_its_tab(page, site, logged_in):
    if logged_in:
        log_in(page, site)
    page.goto(f"/p/{SLUG}/owners/")
    expect(page.locator('.tabs a[aria-current="page"]')).to_have_text("Owners")
    # One line: every item of the header beside the first, none below it.
    boxes = page.locator(".topbar > :not(.spacer)").evaluate_all(
        "els => els.map(e => e.getBoundingClientRect()).map(r => [r.top, r.bottom])"
    )
    first_bottom = min(bottom for _, bottom in boxes)
    assert all(top < first_bottom for top, _ in boxes), boxes


def test_logged_in_the_heatmap_carries_one_exempt_form_not_one_a_row(page, site):
    anonymous = len(page.request.get(f"/p/{SLUG}/").body())
    log_in(page, site)
    page.goto(f"/p/{SLUG}/")
    expect(page.locator("#heatmap form")).to_have_count(0)
    logged_in = len(page.request.get(f"/p/{SLUG}/").body())
    # A link a row ("Exempt…"), not a form a row, which weighed down the page.
    assert logged_in < anonymous * 1.15, (logged_in, anonymous)
