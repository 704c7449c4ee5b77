"""Pages that list more than they draw: the heatmap's rows, a file's tests and a backend pair's
lists, walked page by page through their "next" links. The pages hold every row once, in the
order of the whole list, and carry the filters and the sort from page to page."""

import importlib
import re
from html import unescape

import pytest

from parity.dashboard import views
from tests.parity.dashboard.conftest import text

P = "/p/pytorch-xla"


def next_href(html: str, nav_id: str) -> str | None:
    nav = html.split(f'id="{nav_id}"', 1)
    if len(nav) < 2:
        return None
    found = re.search(r'<a href="([^"]*)" rel="next">', nav[1].split("</nav>", 1)[0])
    return unescape(found.group(1)) if found else None


def heatmap_rows(html: str) -> list[str]:
    return re.findall(r'<tr data-name="([^"]*)"', html)


def walk(client, url: str, *, read, nav_id: str) -> tuple[list, list[str]]:
    """Every page from ``url`` on: the rows ``read`` finds on each, and the URLs visited."""
    found, visited = [], []
    while url is not None:
        assert url not in visited, "a page links back to one already read"
        visited.append(url)
        html = text(client.get(url))
        found.append(read(html))
        url = next_href(html, nav_id)
        if url is not None and url.startswith("?"):
            url = visited[-1].split("?", 1)[0] + url
    return found, visited


@pytest.mark.parametrize(
    "query",
    ["", "sort=name", "sort=-name", "sort=-worst", "sort=neuron", "dir=1", "dir=1&sort=tpu"],
)
def test_heatmap_pages_hold_every_row_once_in_order(client, runs, monkeypatch, query):
    whole = heatmap_rows(text(client.get(f"{P}/?{query}")))
    assert len(whole) >= 2
    monkeypatch.setattr(views, "HEATMAP_ROWS_PER_PAGE", 1)
    pages, visited = walk(client, f"{P}/?{query}", read=heatmap_rows, nav_id="heatmap-pager")
    assert [len(page) for page in pages] == [1] * len(whole)
    assert [row for page in pages for row in page] == whole
    for url in visited[1:]:  # the sort and the folders come along
        assert all(part in url for part in query.split("&") if part)


def test_heatmap_pages_hold_fewer_rows_the_more_backends_share_their_cells(
    client, runs, monkeypatch
):
    from parity.models import Backend

    heatmap = importlib.import_module("parity.selectors.heatmap")  # not the selector's name

    whole = heatmap_rows(text(client.get(f"{P}/")))
    backends = Backend.objects.filter(project__slug="pytorch-xla").count()
    monkeypatch.setattr(heatmap, "MIN_ROWS_PER_PAGE", 1)
    monkeypatch.setattr(views, "HEATMAP_CELLS_PER_PAGE", 2 * backends)  # two rows' cells

    pages, _ = walk(client, f"{P}/", read=heatmap_rows, nav_id="heatmap-pager")

    assert [len(page) for page in pages] == [2] * (len(whole) // 2) + [1] * (len(whole) % 2)
    assert [row for page in pages for row in page] == whole


def test_rows_a_page_follow_the_cells_but_never_fall_below_the_least():
    from parity.selectors.fragments import rows_per_page

    assert rows_per_page(200, cells_per_page=2000, columns=4, least=20) == 200
    assert rows_per_page(200, cells_per_page=2000, columns=20, least=20) == 100
    assert rows_per_page(200, cells_per_page=2000, columns=500, least=20) == 20
    assert rows_per_page(200, cells_per_page=None, columns=20, least=20) == 200


def test_heatmap_filter_spans_pages_and_counts_them_all(client, runs, monkeypatch):
    monkeypatch.setattr(views, "HEATMAP_ROWS_PER_PAGE", 1)
    html = text(client.get(f"{P}/?q=ops"))
    assert heatmap_rows(html) == ["test/ops/test_b.py"] or heatmap_rows(html) == [
        "test/ops/test_a.py"
    ]
    assert re.search(r'id="heatmap-count" data-total="3">2 of 3<', html)
    assert 'data-paged="1"' in html  # the script leaves the filter to the server
    pages, visited = walk(client, f"{P}/?q=ops", read=heatmap_rows, nav_id="heatmap-pager")
    assert sorted(row for page in pages for row in page) == [
        "test/ops/test_a.py",
        "test/ops/test_b.py",
    ]
    assert "q=ops" in visited[1]


def test_heatmap_sort_and_filter_links_go_back_to_the_first_page(client, runs, monkeypatch):
    monkeypatch.setattr(views, "HEATMAP_ROWS_PER_PAGE", 1)
    html = text(client.get(f"{P}/?page=2"))
    assert 'aria-label="Pages of rows"' in html and "files 2–2 of 3" in html
    sort_links = re.findall(r'href="(\?[^"]*sort=[^"]*)"', html)
    assert sort_links and not any("page=" in unescape(link) for link in sort_links)


def test_a_heatmap_of_one_page_has_no_pager_and_filters_in_place(client, runs):
    html = text(client.get(f"{P}/"))
    assert 'id="heatmap-pager"' not in html and "data-paged" not in html


MANY = "test/test_many.py"


def file_rows(html: str) -> list[str]:
    """The tests of a file page's grid, by name (not a backend's folded row)."""
    return re.findall(r'<th scope="row"><a href="[^"]*">([^<]*)</a></th>', html)


@pytest.fixture
def many(upload_run, xla):
    """A file of 45 tests: every one passes on cpu; tpu fails, skips, lacks or passes them;
    neuron never ran the file."""
    cpu = {f"{MANY}::TestM::test_{n:02}": "passed" for n in range(45)}
    outcomes = ["passed", ("failed", "boom"), ("skipped", "not on tpu"), None]
    tpu = {case: outcomes[n % 4] for n, case in enumerate(cpu) if outcomes[n % 4] is not None}
    upload_run("cpu", cpu, day="2026-04-01")
    upload_run("tpu", tpu, day="2026-04-01")
    upload_run("neuron", {"test/other.py::TestO::test_o": "passed"}, day="2026-04-01")


@pytest.mark.parametrize("backend", ["", "tpu", "cpu"])
def test_a_files_pages_hold_every_test_once_in_order(client, many, monkeypatch, backend):
    url = f"{P}/file/?path={MANY}" + (f"&backend={backend}" if backend else "")
    whole = file_rows(text(client.get(url)))
    assert len(whole) == 45 and len(set(whole)) == 45
    monkeypatch.setattr(views, "FILE_TESTS_PER_PAGE", 10)
    pages, visited = walk(client, url, read=file_rows, nav_id="file-pager")
    assert [len(page) for page in pages] == [10, 10, 10, 10, 5]
    assert [row for page in pages for row in page] == whole
    assert all(f"backend={backend}" in url for url in visited[1:] if backend)


def test_a_files_page_holds_fewer_tests_the_more_backends_it_shows(client, many, monkeypatch):
    """A page is at most ``FILE_CELLS_PER_PAGE`` cells: with three backends' columns (neuron,
    which never ran the file, is one row instead), 40 cells are 13 tests a page."""
    url = f"{P}/file/?path={MANY}"
    whole = file_rows(text(client.get(url)))
    monkeypatch.setattr(views, "FILE_CELLS_PER_PAGE", 40)
    pages, _ = walk(client, url, read=file_rows, nav_id="file-pager")
    first = text(client.get(url))
    head = first.split('id="file-grid"', 1)[1].split("</thead>", 1)[0]
    assert head.count('<th scope="col"') == 1 + 3  # the test's column, then three backends'
    assert [len(page) for page in pages] == [13, 13, 13, 6]
    assert [row for page in pages for row in page] == whole
    assert "tests 1–13 of 45" in first


def test_a_chosen_backends_worst_outcomes_come_first_across_pages(client, many, monkeypatch):
    monkeypatch.setattr(views, "FILE_TESTS_PER_PAGE", 10)
    url = f"{P}/file/?path={MANY}&backend=tpu"
    words = []
    for html in (text(client.get(url)), text(client.get(url + "&page=4"))):
        words += re.findall(r'data-backend="tpu">.*?class="word[^"]*">([^<]*)<', html, re.S)
    # failed first, then skipped, then missing, then passed: page 1 then page 4.
    assert words[:10] == ["failed"] * 10 and words[-5:] == ["passed"] * 5


def test_a_backend_that_never_ran_the_file_is_one_row_on_the_first_page(client, many, monkeypatch):
    monkeypatch.setattr(views, "FILE_TESTS_PER_PAGE", 10)
    first = text(client.get(f"{P}/file/?path={MANY}"))
    assert "missing on neuron: 45 tests" in first
    grid = first.split('id="file-grid"', 1)[1]
    head, body = grid.split("</thead>", 1)
    assert "neuron" not in head and body.split("<tr>", 1)[0].count('data-backend="neuron"') == 1
    second = text(client.get(f"{P}/file/?path={MANY}&page=2"))
    assert "missing on neuron" not in second and len(file_rows(second)) == 10
    # The counts above the grid still count every test, on every backend.
    summary = first.split('id="file-summary"', 1)[1].split("</table>", 1)[0]
    assert re.search(r"missing</th>(<td[^>]*>\d+</td>){2}<td[^>]*>45</td>", summary)


def pair_tests(section: str):
    def read(html: str) -> list[str]:
        body = html.split(f'id="{section}"', 1)[1].split("</section>", 1)[0]
        return re.findall(r'<td class="test"><a href="[^"]*">([^<]*)</a>', body)

    return read


@pytest.mark.parametrize(
    ("section", "nav"), [("passes-only-a", "pager-page_a"), ("passes-only-b", "pager-page_b")]
)
def test_a_pairs_lists_page_apart_and_hold_every_test_once(client, runs, monkeypatch, section, nav):
    url = f"{P}/matrix/pair/?a=cpu&b=neuron"
    if section == "passes-only-b":
        url = f"{P}/matrix/pair/?a=neuron&b=cpu"
    whole = pair_tests(section)(text(client.get(url)))
    assert len(whole) >= 2 and len(set(whole)) == len(whole)
    monkeypatch.setattr(views, "PAIR_TESTS_SHOWN", 1)
    pages, visited = walk(client, url, read=pair_tests(section), nav_id=nav)
    assert [row for page in pages for row in page] == whole
    assert all("a=" in url and "b=" in url for url in visited)
    # The other list stays on its first page meanwhile.
    other = "passes-only-b" if section == "passes-only-a" else "passes-only-a"
    last = text(client.get(visited[-1]))
    assert pair_tests(other)(last) == pair_tests(other)(text(client.get(visited[0])))


def test_a_pair_page_past_the_end_says_so(client, runs):
    html = text(client.get(f"{P}/matrix/pair/?a=cpu&b=neuron&page_a=50"))
    assert "No tests past 49 pages here" in html


def test_a_pairs_files_on_one_backend_only_come_a_page_at_a_time(
    client, upload_run, xla, monkeypatch
):
    cpu = {f"test/test_f{n}.py::TestF::test_f": "passed" for n in range(5)}
    upload_run("cpu", cpu, day="2026-04-01")
    upload_run("neuron", {"test/test_f0.py::TestF::test_f": "passed"}, day="2026-04-01")
    monkeypatch.setattr(views, "PAIR_FILES_SHOWN", 3)

    def files(html: str) -> list[str]:
        body = html.split('id="files-only-a"', 1)[1].split("</section>", 1)[0]
        return re.findall(r'<li><a href="[^"]*">([^<]*)</a>', body)

    pages, visited = walk(
        client, f"{P}/matrix/pair/?a=cpu&b=neuron", read=files, nav_id="pager-files_page_a"
    )
    assert pages == [[f"test/test_f{n}.py" for n in (1, 2, 3)], ["test/test_f4.py"]]
    last = text(client.get(visited[-1]))
    assert "files 4–4 of 4" in last and '<ol class="files" start="4">' in last
    # The other backend's list and the badge stay whole.
    assert "None: every test file neuron runs, cpu runs too." in last
    assert re.search(r'not on neuron <span class="badge">4</span>', last)
