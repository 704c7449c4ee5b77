"""Every page of the demo, read in Chromium at a desktop width and at 400 px: it answers, shows
no template source (in its HTML or its visible text), logs no console error, asks no host but its
own (the ``page`` fixture checks those three), draws its charts with data, and at 400 px does
not scroll sideways as a whole (a wide table scrolls inside its own box). Each leaves
``screenshots/test_every_page_reads_cleanly[<width>-<page>].png``."""

import re
from urllib.parse import quote, unquote, urlsplit

import pytest
from playwright.sync_api import expect

from parity import selectors
from parity.models import Gap, Project
from tests.browser.conftest import log_in, no_chromium
from tests.browser.layout import page_overflow

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "pytorch-xla"
P = f"/p/{SLUG}"
PAGES = (
    "overview",
    "heatmap",
    "heatmap-folders",
    "heatmap-aligned",
    "file",
    "test",
    "skip-reasons",
    "trend",
    "queue",
    "gaps",
    "owners",
    "gaps-aligned",
    "exemptions",
    "matrix",
    "pair",
    "runs",
    "compare-views",
    "compare",
    "suites",
    "digest",
    "api-docs",
    "login",
)
# Pages with Plotly charts: the selector of each chart's node, and how many there are.
CHARTS = {"skip-reasons": ("#reason-chart", 1), "trend": ("#trend-chart", 1)}


def url_of(name: str) -> str:
    project = Project.objects.get(slug=SLUG)
    if name == "file":  # the worst file tpu ran (the worst of all it never ran: one row)
        rows = selectors.heatmap(project=project, query=selectors.HeatmapQuery(sort="tpu")).rows
        tpu = [next(c for c in r.cells if c.backend == "tpu") for r in rows]
        worst = next(r.name for r, c in zip(rows, tpu, strict=True) if c.total > c.missing)
        return f"{P}/file/?path={quote(worst)}&backend=tpu"
    if name == "test":
        gap = Gap.objects.filter(project=project, is_open=True).order_by("pk").first()
        return f"{P}/tests/{gap.test_id}/"
    return {
        "overview": "/",
        "heatmap": f"{P}/",
        "heatmap-folders": f"{P}/?dir=1",
        "heatmap-aligned": f"{P}/?aligned=1",
        "skip-reasons": f"{P}/skip-reasons/",
        "trend": f"{P}/trend/",
        "queue": f"{P}/queue/",
        "gaps": f"{P}/gaps/?open=1",
        "owners": f"{P}/owners/",
        "gaps-aligned": f"{P}/gaps/?aligned=1",
        "exemptions": f"{P}/exemptions/",
        "matrix": f"{P}/matrix/",
        "pair": f"{P}/matrix/pair/?a=cpu&b=tpu",
        "runs": f"{P}/runs/",
        "compare-views": f"{P}/compare/",
        "compare": "/p/rocm-parity/compare/gfx90a-vs-cuda/",  # the demo's compare view
        "suites": f"{P}/suites/",
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
    if name == "overview":  # three inline SVG sparklines, each a line
        spark = page.locator('section[data-project="pytorch-xla"] svg.spark polyline')
        expect(spark).to_have_count(3)
    if page.viewport_size["width"] < 600:
        overflow = page_overflow(page)
        assert overflow <= 0, f"{name} scrolls sideways by {overflow}px at 400px"


# Boxes that scroll sideways inside a page: what they hide, a reader at 400 px never sees.
_SIDEWAYS = """els => els.filter(el => el.scrollWidth > el.clientWidth + 1
    && ['auto', 'scroll'].includes(getComputedStyle(el).overflowX))
    .map(el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + ' ' + el.className)"""


@pytest.mark.parametrize("page", ["narrow"], indirect=True)
def test_at_400px_the_overview_shows_counts_and_actions_without_sideways_scrolling(page):
    card = next(c for c in selectors.project_cards() if c.project.slug == "pytorch-xla")
    page.goto("/")

    assert page.eval_on_selector_all("main *", _SIDEWAYS) == []
    for backend in card.backends:
        row = page.locator(f'section[data-project="pytorch-xla"] tr[data-backend="{backend.name}"]')
        shown = [row.locator("th")]
        if not backend.is_reference:
            shown += [
                row.locator("td.untracked a", has_text=f"{backend.untracked:,}"),
                row.get_by_role("link", name=f"worst files on {backend.name}"),
                row.locator("svg.spark"),
            ]
        for element in shown:
            element.scroll_into_view_if_needed()  # the demo's other projects come first
            expect(element).to_be_in_viewport()
            box = element.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= 400, f"{backend.name}: {box}"


@pytest.mark.parametrize("page", ["narrow"], indirect=True)
def test_at_400px_the_file_page_shows_its_reasons_and_the_chosen_backend(page):
    page.goto(url_of("file"))

    assert page.eval_on_selector_all("main *", _SIDEWAYS) == []
    chosen = page.locator("#file-grid tbody tr >> nth=0 >> td.chosen")
    expect(chosen).to_be_visible()
    box = chosen.bounding_box()
    assert box["x"] + box["width"] <= 400
    for row in page.locator("#file-reasons tbody tr").all():
        box = row.bounding_box()
        assert box["x"] + box["width"] <= 400


@pytest.mark.parametrize("page", ["narrow"], indirect=True)
def test_at_400px_a_fixed_gap_says_which_date_opened_it_and_which_fixed_it(page):
    page.goto(f"{P}/gaps/?since=2000-01-01")

    expect(page.locator("#fixed-gaps thead")).to_be_hidden()  # each row a block of its own
    dates = page.eval_on_selector_all("#fixed-gaps tbody tr:first-child td.nowrap", _AS_READ)
    assert len(dates) == 2
    assert re.fullmatch(r"opened \d{4}-\d\d-\d\d", dates[0]), dates
    assert re.fullmatch(r"fixed \d{4}-\d\d-\d\d", dates[1]), dates
    opened = page.eval_on_selector_all("#new-gaps tbody tr:first-child td.nowrap", _AS_READ)
    assert re.fullmatch(r"opened \d{4}-\d\d-\d\d", opened[-1]), opened


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_the_demos_suites_read_as_one_row_each_with_every_backends_cell(page):
    """The seed's question, "which of CPU's suites does TPU run at all", as the matrix answers
    it from the demo's runner scripts: a row per suite, a cell per backend, each named."""
    page.goto(f"{P}/suites/")

    rows = page.locator("#suites-matrix tbody tr")
    expect(rows).to_have_count(3)
    torch_ops = page.locator('#suites-matrix tr[data-suite="torch_op_tests"]')
    expect(torch_ops.locator('td[data-backend="tpu"] .suite-status')).to_have_text("never ran")
    neuron = torch_ops.locator('td[data-backend="neuron"]')
    expect(neuron.locator(".suite-status")).to_have_text("excluded")
    expect(neuron).to_contain_text("never calls it")
    main = page.locator('#suites-matrix tr[data-suite="run_tests"]')
    for backend in ("cpu", "gpu", "tpu", "neuron"):
        cell = main.locator(f'td[data-backend="{backend}"]')
        expect(cell.locator(".suite-status")).to_have_text("ran")
        expect(cell.get_by_role("link", name="its tests")).to_be_visible()
    # A run's green is the gate's ok: tpu's newest nightly has failing tests, all of them gaps
    # it had before (none opened), so it is green, and tpu is not broken.
    tpu = main.locator('td[data-backend="tpu"]')
    expect(tpu.locator(".suite-health")).to_have_attribute("data-streak", "1")
    expect(tpu.locator(".suite-tier")).to_have_text("informing")
    if page.viewport_size["width"] < 600:
        assert page.eval_on_selector_all("main *", _SIDEWAYS) == []
        labels = page.eval_on_selector_all('tr[data-suite="run_tests"] td', _AS_READ)
        assert [label.split(":")[0] for label in labels] == ["cpu", "gpu", "neuron", "tpu"]


# Cells as a reader sees them: the label CSS puts before each (``::before``), then the text.
_AS_READ = """els => els.map(el => {
    const label = getComputedStyle(el, '::before').content;
    return ((label && label !== 'none' ? JSON.parse(label) : '') + el.innerText).trim();
})"""


# An absolute URL to this machine, with its port if it names one (in a page's HTML, or
# percent-encoded in a link such as a tracker's prefilled new-issue URL).
_LOCAL_URL = re.compile(r"https?://(?:127\.0\.0\.1|localhost)(?::(\d+))?")


def test_no_page_links_to_a_port_the_server_does_not_serve(page, site):
    log_in(page, site)  # a maintainer sees the triage forms and the drafted issue too
    gap = Gap.objects.filter(project__slug=SLUG, is_open=True).order_by("pk").first()
    served = str(urlsplit(site.url).port)
    urls = [url_of(name) for name in PAGES] + [f"{P}/file-issue/?gap={gap.pk}"]
    wrong = {}
    for url in urls:
        page.goto(url)
        html = unquote(page.content())
        ports = {match.group(1) or "80" for match in _LOCAL_URL.finditer(html)}
        if ports - {served}:
            wrong[url] = sorted(ports - {served})
    assert wrong == {}, f"links to ports other than {served}: {wrong}"
    # The drafted issue links its tests to this server.
    assert f"{site.url}{P}/tests/{gap.test_id}/" in page.locator("#id_body").input_value()
