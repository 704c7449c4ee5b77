"""Sortable lists (``?sort=``, both directions, the sort in force shown on its column) on the
gaps, skip reasons, exemptions and runs pages, and the gaps list as CSV, as filtered and sorted."""

import csv
import io
import re
from urllib.parse import urlencode

import pytest

from parity.models import Gap, GapState
from parity.selectors import gaps as gaps_selectors
from tests.parity.dashboard.conftest import text
from tests.parity.dashboard.test_views import cells, rows

P = "/p/pytorch-xla"


def header(html: str, label: str) -> str:
    """The <th> of a sortable column, by its label."""
    found = re.findall(r'<th scope="col" class="sortable[^"]*"[^>]*>.*?</th>', html)
    return next(th for th in found if f">{label}</a>" in th)


def open_gaps(**filters):
    gaps = Gap.objects.filter(is_open=True, **filters).exclude(state=GapState.REFERENCE_MISSING)
    return gaps.select_related("backend", "test")


def test_gaps_sort_by_test_both_ways_and_show_it(client, runs):
    keys = sorted(g.test.key for g in open_gaps())
    html = text(client.get(f"{P}/gaps/?open=1&sort=test"))
    section = html.split('id="new-gaps"')[1].split("</section>")[0]
    shown = re.findall(r'<td class="test"><a href="[^"]+">([^<]+)</a>', section)
    assert shown == keys
    th = header(section, "Test")
    assert 'aria-sort="ascending"' in th and "sort=-test" in th and "open=1" in th

    html = text(client.get(f"{P}/gaps/?open=1&sort=-test"))
    section = html.split('id="new-gaps"')[1].split("</section>")[0]
    assert re.findall(r'<td class="test"><a href="[^"]+">([^<]+)</a>', section) == keys[::-1]
    assert 'aria-sort="descending"' in header(section, "Test")
    assert "aria-sort" not in header(section, "Opened")


def test_an_unknown_sort_falls_back_to_newest_first(client, runs):
    html = text(client.get(f"{P}/gaps/?open=1&sort=nonsense"))
    section = html.split('id="new-gaps"')[1].split("</section>")[0]
    assert 'aria-sort="descending"' in header(section, "Opened")


def test_the_gaps_csv_is_the_list_as_filtered_and_sorted_every_page(client, runs):
    response = client.get(f"{P}/gaps.csv?open=1&backend=tpu&sort=-test&page=2")
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert 'filename="pytorch-xla-gaps.csv"' in response["Content-Disposition"]
    table = list(csv.reader(io.StringIO(response.content.decode())))
    assert table[0] == [
        "backend",
        "test",
        "file",
        "state",
        "reason",
        "issues",
        "tracking",
        "opened",
        "owners",
        "also_failing",
        "history",
        "suite",  # the suite the reference runs the test in (none here)
    ]
    expected = sorted(open_gaps(backend__name="tpu"), key=lambda g: g.test.key, reverse=True)
    assert [(r[0], r[1], r[3]) for r in table[1:]] == [
        ("tpu", g.test.key, g.state) for g in expected
    ]
    skipped = next(r for r in table[1:] if r[3] == "skipped")
    assert skipped[5] == "https://github.com/pytorch/xla/issues/4242" and skipped[6] == "tracked"
    assert client.head(f"{P}/gaps.csv?open=1").status_code == 200
    page = text(client.get(f"{P}/gaps/?open=1&backend=tpu&sort=-test"))
    assert f'href="{P}/gaps.csv?open=1&backend=tpu&sort=-test"' in page


@pytest.mark.parametrize("sort", ["-opened", "reason", "-reason", "test"])
def test_the_gaps_csv_read_in_batches_keeps_the_order(client, runs, monkeypatch, sort):
    whole = client.get(f"{P}/gaps.csv?open=1&sort={sort}").content.decode()
    monkeypatch.setattr(gaps_selectors, "LINES_FETCHED", 2)
    batched = client.get(f"{P}/gaps.csv?open=1&sort={sort}").content.decode()
    assert batched == whole and len(whole.splitlines()) > 5


def test_runs_sort_by_backend(client, runs):
    table = rows(text(client.get(f"{P}/runs/?sort=backend")), "runs-table")
    backends = [cells(row)[1] for row in table]
    assert backends == sorted(backends) and len(set(backends)) == 4
    table = rows(text(client.get(f"{P}/runs/?sort=-backend")), "runs-table")
    assert [cells(row)[1] for row in table] == sorted(backends, reverse=True)


@pytest.mark.parametrize("sort", ["reason", "-reason"])
def test_skip_reasons_sort_by_their_text(client, runs, sort):
    html = text(client.get(f"{P}/skip-reasons/?sort={sort}"))
    given = [
        cells(row)[0].lower()
        for row in rows(html, "reasons-table")
        if 'data-reason="none"' not in row
    ]
    assert given == sorted(given, reverse=sort.startswith("-")) and len(given) > 2
    th = header(html, "Reason")
    assert ("ascending" if sort == "reason" else "descending") in th


def test_exemptions_sort_by_kind(client, runs, exemptions):
    html = text(client.get(f"{P}/exemptions/?sort=kind"))
    kinds = [
        re.search(r'data-kind="(\w+)"', row).group(1) for row in rows(html, "exemptions-table")
    ]
    assert kinds == sorted(kinds) and len(set(kinds)) == 3
    html = text(client.get(f"{P}/exemptions/?sort=-kind"))
    kinds = [
        re.search(r'data-kind="(\w+)"', row).group(1) for row in rows(html, "exemptions-table")
    ]
    assert kinds == sorted(kinds, reverse=True)


def test_a_queue_groups_gaps_sort_and_download_with_its_filter(client, runs):
    """The triage queue opens a group as the gaps list with ``file=`` or ``reason=``: sorting
    it and its CSV keep the group."""
    gap = open_gaps(state=GapState.SKIPPED).exclude(reason=None).first()
    groups = {
        urlencode({"file": gap.test.file}): open_gaps(test__file=gap.test.file),
        urlencode({"reason": gap.reason_id}): open_gaps(reason_id=gap.reason_id),
    }
    for query, gaps in groups.items():
        keys = sorted((g.test.key for g in gaps), reverse=True)
        assert 0 < len(keys) < open_gaps().count()
        html = text(client.get(f"{P}/gaps/?open=1&{query}&sort=-test"))
        section = html.split('id="new-gaps"')[1].split("</section>")[0]
        assert re.findall(r'<td class="test"><a href="[^"]+">([^<]+)</a>', section) == keys
        assert query in header(section, "Backend")  # another column's sort keeps the group
        csv_url = f"{P}/gaps.csv?open=1&{query}&sort=-test"
        assert f'href="{csv_url}"' in html
        table = list(csv.reader(io.StringIO(client.get(csv_url).content.decode())))
        assert [r[1] for r in table[1:]] == keys
