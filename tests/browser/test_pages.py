"""The dashboard in Chromium, with three days of demo data: the heatmap and its clicks, the
skip-reason chart, filters kept in the URL, triage, the backend matrix's cells and their CSV,
the test page's copy button, and no request leaving 127.0.0.1."""

import csv
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.db.models import Count
from playwright.sync_api import expect

from parity import selectors as dashboard
from parity.dashboard import presenters
from parity.models import Gap, GapState, Project
from tests.browser.conftest import DEMO_DAYS, log_in, no_chromium

# Each test runs in a transaction of its own, rolled back after it; the module's data and every
# write the browser makes through the live server are committed outside it (see conftest).
pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "pytorch-xla"


def query(page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def test_overview_shows_scores_sparklines_and_uploads(page):
    card = next(c for c in dashboard.project_cards() if c.project.slug == SLUG)
    page.goto("/")
    section = page.locator(f'.project-card[data-project="{SLUG}"]')
    rows = section.locator("tbody tr")
    expect(rows).to_have_count(len(card.backends))
    for row, backend in zip(rows.all(), card.backends, strict=True):
        expect(row.locator("th")).to_contain_text(backend.name)
        expect(row).to_contain_text("ago")  # the last upload's age
    # One sparkline per backend but the reference, drawn inline: no charting library loads.
    expect(section.locator("svg.spark polyline")).to_have_count(len(card.backends) - 1)
    assert page.evaluate("typeof window.Plotly") == "undefined"


def test_heatmap_rows_columns_and_labels_match_the_data(page):
    heatmap = presenters.heatmap_cells(dashboard.heatmap(project=Project.objects.get(slug=SLUG)))
    page.goto(f"/p/{SLUG}/")
    table = page.locator("#heatmap")
    headers = table.locator("thead th.col")
    expect(headers).to_have_text(
        [b.backend + ("ref" if b.is_reference else "") for b in heatmap.backends]
    )
    assert heatmap.backends[0].is_reference
    expect(table.locator("tbody tr")).to_have_count(len(heatmap.rows))
    # Every cell's label, row by row, in the page's order (the most gaps first).
    labels = table.locator("tbody tr").evaluate_all(
        "rows => rows.map(r => [r.dataset.name, ...Array.from(r.querySelectorAll('td'),"
        " td => td.innerText.trim())])"
    )
    assert labels == [[row.name, *[c.label for c in row.cells]] for row in heatmap.rows]
    expect(page.locator(".legend")).to_contain_text("missing")
    expect(page.locator(".legend")).to_contain_text("ref skips, fails or lacks them: no gap")


def test_the_heatmaps_first_rows_are_the_files_with_the_most_gaps_against_the_reference(page):
    project = Project.objects.get(slug=SLUG)
    # Intended gaps (by design) are not counted against a backend, nor sorted on.
    gaps = dict(
        Gap.objects.filter(project=project, is_open=True, intended=False)
        .exclude(state=GapState.REFERENCE_MISSING)
        .values_list("test__file")
        .annotate(n=Count("pk"))
        .order_by()
    )
    page.goto(f"/p/{SLUG}/")
    names = page.locator("#heatmap tbody tr").evaluate_all("rows => rows.map(r => r.dataset.name)")

    most = sorted(gaps.values(), reverse=True)
    assert [gaps.get(name, 0) for name in names[:10]] == most[:10]
    # Every file with a gap before any without: a file the reference itself skips (the demo's
    # test/test_pallas.py, 37 of 37) has none, and its cells say why.
    with_gaps = [name for name in names if gaps.get(name)]
    assert names[: len(with_gaps)] == with_gaps
    pallas = page.locator('#heatmap tr[data-name="test/test_pallas.py"]')
    assert names.index("test/test_pallas.py") >= len(with_gaps)
    expect(pallas.locator('td[data-backend="tpu"]')).to_have_text("ref skips")
    expect(pallas.locator('td[data-backend="cpu"]')).to_have_text("0/37")

    # The sort in force shows, and its button turns it around.
    sort = page.locator("#heatmap-sort a[aria-current]")
    expect(sort).to_have_text("most gaps first ▼")
    sort.click()
    expect(page.locator("#heatmap-sort a[aria-current]")).to_have_text("fewest gaps first ▲")
    assert query(page)["sort"] == ["-worst"]
    reversed_names = page.locator("#heatmap tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.name)"
    )
    # Fewest gaps first, ties by name, and the files with nothing to compare (the reference
    # passes none of their tests) still last, by name.
    comparable = {
        row.name
        for row in dashboard.heatmap(project=project).rows
        if any(c.parity is not None or c.gaps for c in row.cells if not c.is_reference)
    }
    assert 0 < len(comparable) < len(names)
    tail = sorted(n for n in names if n not in comparable)
    assert reversed_names[len(comparable) :] == names[len(comparable) :] == tail
    fewest = [gaps.get(name, 0) for name in reversed_names[: len(comparable)]]
    assert fewest == sorted(fewest) and fewest[-1] == most[0]
    # A column: its arrow, and a click for the other direction.
    page.locator("#heatmap thead th.col a", has_text="tpu").click()
    expect(page.locator('#heatmap th[aria-sort="ascending"]')).to_have_text("tpu ▼")
    page.locator("#heatmap thead th.col a", has_text="tpu").click()
    expect(page.locator('#heatmap th[aria-sort="descending"]')).to_have_text("tpu ▲")
    assert query(page)["sort"] == ["-tpu"]


def test_clicking_a_cell_opens_that_file_on_that_backend(page):
    heatmap = dashboard.heatmap(
        project=Project.objects.get(slug=SLUG), query=dashboard.HeatmapQuery(sort="tpu")
    )
    worst = heatmap.rows[0]
    page.goto(f"/p/{SLUG}/?sort=tpu")
    page.locator('#heatmap tbody tr >> nth=0 >> td[data-backend="tpu"] a').click()
    expect(page).to_have_url(re.compile(r"/file/\?"))
    assert query(page) == {"path": [worst.name], "backend": ["tpu"]}
    expect(page.locator("h1")).to_have_text(worst.name)
    expect(page.locator('nav.seg a[aria-current="true"]')).to_have_text("tpu")
    grid = dashboard.file_grid(
        project=Project.objects.get(slug=SLUG), file=worst.name, backend="tpu"
    )
    # The demo's worst file on tpu is one tpu never ran: one row says so, not one per test.
    assert grid.folded is not None
    expect(page.locator("#file-grid tbody tr")).to_have_count(1)
    expect(page.locator("#file-grid")).to_contain_text(f"missing on tpu: {grid.folded.tests:,}")
    page.get_by_role("link", name="List the tests").click()
    # Every test with the other backends' outcomes, and first one row for each backend that
    # never ran the file (tpu among them).
    every = dashboard.file_grid(project=Project.objects.get(slug=SLUG), file=worst.name)
    assert "tpu" in [n.backend for n in every.never_ran]
    folded = len(every.never_ran)
    expect(page.locator("#file-grid tbody tr")).to_have_count(min(every.tests, 100) + folded)
    expect(page.locator("#file-grid tbody tr.folded-row")).to_have_count(folded)
    expect(page.locator("#file-grid thead")).not_to_contain_text("tpu")


def test_worst_file_on_neuron_in_two_clicks(page):
    """The issue's "done when": from the overview, two clicks to the worst file on neuron, and
    there why its tests do not pass and which issue tracks each reason."""
    heatmap = dashboard.heatmap(
        project=Project.objects.get(slug=SLUG), query=dashboard.HeatmapQuery(sort="neuron")
    )
    page.goto("/")
    page.get_by_role("link", name="worst files on neuron").click()  # click 1
    expect(page.locator('#heatmap th[aria-sort="ascending"]')).to_contain_text("neuron")
    page.locator('#heatmap tbody tr >> nth=0 >> td[data-backend="neuron"] a').click()  # click 2
    assert query(page) == {"path": [heatmap.rows[0].name], "backend": ["neuron"]}
    reasons = page.locator("#reasons")
    expect(reasons).to_contain_text("Why tests do not pass on neuron")
    expect(reasons.locator("tbody tr").first).to_be_visible()
    # Each listed reason says which issue tracks it, or that none does.
    for row in reasons.locator("tbody tr[data-reason]").all():
        assert row.locator("a.issue").count() or row.locator(".badge.untracked").count()


def test_skip_reason_chart_renders_its_series(page):
    page.goto(f"/p/{SLUG}/skip-reasons/")
    chart = page.locator("#reason-chart")
    expect(chart.locator(".main-svg").first).to_be_visible()
    body = page.request.get(chart.get_attribute("data-url")).json()
    assert body["series"], "the demo has skipped tests"
    expect(chart.locator(".scatterlayer .trace")).to_have_count(len(body["series"]))
    legend = chart.locator(".legend .traces .legendtext").all_text_contents()
    assert [name[:59] for name in legend] == [s["name"][:59] for s in body["series"]]
    # The demo's history starts DEMO_DAYS ago, inside the 28-day window: so does the chart.
    assert len(page.evaluate("document.getElementById('reason-chart').data[0].x")) == DEMO_DAYS
    rows = page.locator("#reasons-table tbody tr")
    table = rows.evaluate_all(
        "rows => rows.map(r => [r.dataset.reason, r.dataset.status,"
        " Number(r.querySelector('td.gap-total').innerText)])"
    )
    # Skips that gave no reason (the demo has some: absltest's suppressed skips) first, gap or
    # none, then the reasons that cost the most parity; a reason that causes no gap is never
    # untracked.
    assert table[0][0] == "none"
    gaps = [n for reason, _, n in table[1:]]
    assert gaps == sorted(gaps, reverse=True) and gaps[0] > 0
    assert all(status != "untracked" for _, status, n in table if n == 0)
    assert any(status == "common" for _, status, _ in table)


def test_skip_reason_backend_filter_changes_url_table_and_chart(page):
    page.goto(f"/p/{SLUG}/skip-reasons/")
    page.select_option("#reasons-filter select[name=backend]", "tpu")
    page.wait_for_url(re.compile(r"backend=tpu"))
    assert query(page)["backend"] == ["tpu"]
    expect(page.locator("h1")).to_contain_text("on tpu")
    expect(page.locator("#reason-chart .main-svg").first).to_be_visible()
    tpu_column = 5  # cpu, gpu, neuron, tpu after the reason and its category
    counts = page.locator(f"#reasons-table tbody tr td:nth-child({tpu_column + 1})")
    # Each cell: the tests skipped on tpu, then the gaps they cause ("3" and "2 gaps").
    assert all(int(n.split()[0]) > 0 for n in counts.all_inner_texts())


def test_heatmap_filter_changes_the_url_and_the_table(page):
    heatmap = dashboard.heatmap(
        project=Project.objects.get(slug=SLUG), query=dashboard.HeatmapQuery(q="spmd")
    )
    page.goto(f"/p/{SLUG}/")
    page.fill("#heatmap-q", "spmd")
    page.wait_for_url(re.compile(r"q=spmd"))
    visible = page.locator("#heatmap tbody tr:visible")
    expect(visible).to_have_count(len(heatmap.rows))
    assert all("spmd" in name for name in visible.evaluate_all("r => r.map(x => x.dataset.name)"))
    expect(page.locator("#heatmap-count")).to_have_text(
        f"{len(heatmap.rows)} of {heatmap.total_rows}"
    )
    page.reload()  # the link is shareable: the server applies ?q= too
    expect(page.locator("#heatmap tbody tr")).to_have_count(len(heatmap.rows))
    expect(page.locator("#heatmap-q")).to_have_value("spmd")
    page.get_by_role("link", name="Folders").click()
    assert query(page) == {"dir": ["1"]}
    page.locator("#heatmap tbody tr th a").first.click()  # drill into the worst folder
    assert "folder" in query(page)
    expect(page.locator(".crumbs")).to_contain_text("all folders")


def test_gaps_filters_change_the_url_and_the_table(page):
    page.goto(f"/p/{SLUG}/gaps/?open=1")
    page.select_option("#gaps-filter select[name=backend]", "neuron")
    page.select_option("#gaps-filter select[name=tracked]", "untracked")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url(re.compile(r"backend=neuron"))
    assert query(page)["backend"] == ["neuron"] and query(page)["tracked"] == ["untracked"]
    rows = page.locator("#new-gaps tbody tr")
    expect(rows.first).to_be_visible()
    assert set(rows.evaluate_all("r => r.map(x => x.dataset.backend)")) == {"neuron"}
    expect(page.locator("#new-gaps .badge.tracked")).to_have_count(0)


def test_tracked_gaps_link_the_issues_their_real_skip_messages_cite(page):
    page.goto(f"/p/{SLUG}/gaps/?open=1&tracked=tracked")
    rows = page.locator("#new-gaps tbody tr")
    expect(rows.first).to_be_visible()
    issues = set(rows.locator("a.issue").all_inner_texts())
    assert {"pytorch/xla#8974", "pytorch/xla#8975", "pytorch/xla#9017"} <= issues
    tpu = rows.filter(has=page.locator("td.test", has_text="test_assume_pure_einsum_grads"))
    expect(tpu.locator("td.reason")).to_have_text("Bug: https://github.com/pytorch/xla/issues/8975")
    expect(tpu.locator("a.issue")).to_have_attribute(
        "href", "https://github.com/pytorch/xla/issues/8975"
    )


def test_runs_and_test_detail_pages(page):
    page.goto(f"/p/{SLUG}/runs/")
    rows = page.locator("#runs-table tbody tr")
    expect(rows).to_have_count(4 * 3)  # four backends, three days
    expect(rows.first).to_contain_text("current")
    page.goto(f"/p/{SLUG}/runs/?backend=neuron")
    assert set(rows.evaluate_all("r => r.map(x => x.dataset.backend)")) == {"neuron"}
    page.goto(f"/p/{SLUG}/?sort=tpu")
    page.locator('#heatmap tbody tr >> nth=0 >> td[data-backend="tpu"] a').click()
    page.get_by_role("link", name="List the tests").click()  # tpu never ran the file
    page.locator("#file-grid tbody tr th a").first.click()
    expect(page.locator("#test-lines tbody tr")).to_have_count(4)
    expect(page.locator("#test-lines .timeline .tick").first).to_be_visible()


def test_a_maintainer_triages_a_gap(page, site):
    page.goto(f"/p/{SLUG}/gaps/?open=1&backend=gpu&tracked=untracked")
    expect(page.locator("details.triage")).to_have_count(0)  # anonymous: no form
    log_in(page, site)
    page.reload()
    first = page.locator("#new-gaps tbody tr").first
    test = first.locator("td.test > a").inner_text()  # the test, not its owners
    first.locator("details.triage summary").click()
    first.locator("input[name=issue_url]").fill("https://github.com/pytorch/xla/issues/31337")
    first.get_by_role("button", name="Save").click()
    expect(page.locator(".message.success")).to_contain_text("Exemption saved")
    assert query(page)["tracked"] == ["untracked"]  # back on the same filtered page
    expect(page.locator("#new-gaps td.test", has_text=test)).to_have_count(0)
    page.goto(f"/p/{SLUG}/gaps/?open=1&backend=gpu&tracked=tracked")
    row = page.locator("#new-gaps tbody tr", has=page.locator("td.test", has_text=test))
    expect(row.locator("a.issue")).to_have_text("pytorch/xla#31337")


def test_a_matrix_cell_opens_the_files_one_backend_runs_and_the_other_does_not(page):
    pair = dashboard.backend_pair(project=Project.objects.get(slug=SLUG), a="cpu", b="tpu")
    page.goto(f"/p/{SLUG}/")
    page.get_by_role("link", name="Overlap", exact=True).click()  # from the project's tabs
    cell = page.locator('#file-matrix tr[data-backend="cpu"] td[data-b="tpu"]')
    expect(cell).to_contain_text(f"{len(pair.files_only_a)} only on cpu")
    cell.locator("a").click()
    assert query(page) == {"a": ["cpu"], "b": ["tpu"]}
    expect(page.locator("#files-only-a ol.files li")).to_have_text(pair.files_only_a)
    expect(page.locator("#files-only-b ol.files li")).to_have_text(pair.files_only_b)
    with page.expect_download() as download:
        page.get_by_role("link", name="the files on one and not the other").click()
    with open(download.value.path(), newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows == [
        ["file", "runs_on", "not_on"],
        *[[file, "cpu", "tpu"] for file in pair.files_only_a],
        *[[file, "tpu", "cpu"] for file in pair.files_only_b],
    ]


def test_the_test_page_copies_the_command_that_runs_it_on_a_backend(page, site):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site.url)
    gap = (
        Gap.objects.filter(backend__name="tpu", is_open=True, state="skipped")
        .select_related("test")
        .first()
    )
    test = gap.test
    page.goto(f"/p/{SLUG}/tests/{test.pk}/")
    command = page.locator("#reproduce-tpu")
    expect(command).to_have_text(
        f"PJRT_DEVICE=TPU python3 {test.file} {test.class_name}.{test.name}"
    )
    button = page.locator('button[data-copy="reproduce-tpu"]')
    button.click()
    expect(button).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == command.inner_text()
