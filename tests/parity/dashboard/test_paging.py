"""Pages that list more than they draw: the heatmap's rows, a file's tests and a backend pair's
lists, walked page by page through their "next" links. The pages hold every row once, in the
order of the whole list, and carry the filters and the sort from page to page."""

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
