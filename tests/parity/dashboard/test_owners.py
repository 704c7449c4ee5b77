"""Code owners on the pages (the triage queue's groups, the gaps list, heatmap rows, the test
page) and ``?owner=``: the gaps page, its CSV and the API list exactly the open gaps of the files
the owner owns, counted here independently with the pure matcher; the queue and the heatmap
keep that owner's files."""

import csv
import io
import re
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from parity.models import Gap, GapState, TestCase
from parity.pure.codeowners import codeowners_parse, owners_of
from parity.services.owners import owners_import
from tests.parity.dashboard.conftest import text
from tests.parity.dashboard_scenario import A, B, C, tid

P = "/p/pytorch-xla"
API = "/api/v1/projects/pytorch-xla"
OWNERS = (Path(__file__).parents[1] / "fixtures" / "owners" / "scenario.CODEOWNERS").read_text()


@pytest.fixture
def owned(xla, runs) -> None:
    owners_import(project=xla, text=OWNERS, name="CODEOWNERS")


def owned_open_gaps(owner: str) -> list[Gap]:
    """The open gaps of ``owner``'s files, by matching each gap's file here, not the roll-up."""
    rules = codeowners_parse(OWNERS).rules
    gaps = Gap.objects.filter(is_open=True).exclude(state=GapState.REFERENCE_MISSING)
    return [
        gap
        for gap in gaps.select_related("test")
        if (rule := owners_of(rules, gap.test.file)) and owner in rule.owners
    ]


def row(html: str, marker: str) -> str:
    """The table row holding ``marker``."""
    start = html.rindex("<tr", 0, html.index(marker))
    return html[start : html.index("</tr>", start)]


def owners_in(html: str) -> list[str]:
    return re.findall(r'<a class="owner"[^>]*>([^<]+)</a>', html)


@pytest.mark.parametrize(
    ("owner", "files"),
    [("@ops-team", {A, B}), ("@bee", {B}), ("@BEE", {B}), ("@pytorch/xla-infra", set())],
)
def test_the_owner_filter_lists_exactly_the_owners_gaps(client, owned, owner, files):
    expected = owned_open_gaps(owner.lower())
    assert {gap.test.file for gap in expected} == files  # the scenario has gaps in A and B

    page = text(client.get(f"{P}/gaps/", {"open": "1", "owner": owner}))
    shown = re.search(r'id="new-gaps">.*?<span class="badge">([\d,]+)</span>', page).group(1)
    assert int(shown) == len(expected)
    if expected:
        assert f"Only the gaps of the test files <strong>{owner.lower()}</strong> owns" in page

    table = list(
        csv.reader(
            io.StringIO(client.get(f"{P}/gaps.csv", {"open": "1", "owner": owner}).content.decode())
        )
    )
    assert sorted((r[0], r[1]) for r in table[1:]) == sorted(
        (g.backend.name, g.test.key) for g in expected
    )
    # A cell starting with "@" gets a leading "'": a spreadsheet must not read it as a formula.
    owners = table[0].index("owners")
    assert all(owner.lower() in r[owners].lstrip("'").split() for r in table[1:])

    body = APIClient().get(f"{API}/gaps/", {"owner": owner, "limit": 100}).json()
    assert sorted(r["id"] for r in body["results"]) == sorted(g.pk for g in expected)
    assert body["count"] == len(expected)
    assert all(owner.lower() in r["owners"] for r in body["results"])


def test_the_queue_shows_each_groups_owners_and_filters_by_owner(client, owned):
    page = text(client.get(f"{P}/queue/"))

    assert owners_in(row(page, f'data-backend="neuron" data-file="{B}"')) == ["@bee", "@ops-team"]
    assert owners_in(row(page, f'data-backend="gpu" data-file="{C}"')) == []  # un-owned
    tpu_reason = Gap.objects.get(backend__name="tpu", test__key=tid(A, 4), is_open=True).reason_id
    assert owners_in(row(page, f'data-backend="tpu" data-reason="{tpu_reason}"')) == ["@ops-team"]

    mine = text(client.get(f"{P}/queue/", {"owner": "@bee"}))
    files = set(re.findall(r'data-file="([^"]+)"', mine))
    assert files == {B}
    expected = [g for g in owned_open_gaps("@bee") if not (g.tracked or g.intended)]
    assert sum(int(n) for n in re.findall(r'data-file="[^"]+" data-gaps="(\d+)"', mine)) == len(
        expected
    )


def test_the_gaps_list_shows_each_gaps_owners(client, owned):
    page = text(client.get(f"{P}/gaps/", {"open": "1"}))

    assert owners_in(row(page, f">{tid(B, 2)}<")) == ["@bee", "@ops-team"]
    assert owners_in(row(page, f">{tid(A, 2)}<")) == ["@ops-team"]
    assert owners_in(row(page, f">{tid(C, 2)}<")) == []
    assert 'href="?open=1&owner=%40bee"' in row(page, f">{tid(B, 2)}<")  # entities read


def test_heatmap_rows_show_their_owners_and_filter_by_one(client, owned):
    page = text(client.get(f"{P}/"))

    assert owners_in(row(page, f'data-name="{B}"')) == ["@bee", "@ops-team"]
    assert owners_in(row(page, f'data-name="{C}"')) == []
    mine = text(client.get(f"{P}/", {"owner": "@ops-team"}))
    assert set(re.findall(r'<tr data-name="([^"]+)"', mine)) == {A, B}


def test_the_test_page_names_its_files_owners(client, owned):
    test = TestCase.objects.get(key=tid(B, 1))

    page = text(client.get(f"{P}/tests/{test.pk}/"))

    owners = page[page.index('id="test-owners"') :]
    assert owners_in(owners[: owners.index("</p>")]) == ["@bee", "@ops-team"]
    assert f'href="{P}/gaps/?open=1&owner=%40bee"' in owners


def test_pages_of_a_project_without_owners_show_none(client, runs):
    for url in (f"{P}/", f"{P}/queue/", f"{P}/gaps/?open=1"):
        assert 'class="owner"' not in text(client.get(url))


def test_a_maintainer_uploads_owners_and_the_page_says_what_they_cover(maintainer, viewer, runs):
    page = text(maintainer.get(f"{P}/owners/"))
    assert "No code owners imported yet." in page and 'id="owners-import"' in page
    assert 'id="owners-import"' not in text(viewer.get(f"{P}/owners/"))
    upload = io.BytesIO(OWNERS.encode())
    upload.name = "CODEOWNERS"
    assert viewer.post(f"{P}/owners/import/", {"file": upload}).status_code == 403

    upload.seek(0)
    answer = maintainer.post(f"{P}/owners/import/", {"file": upload}, follow=True)

    page = text(answer)
    assert "4 rule(s) imported: 2 of 3 test files have owners." in page
    assert re.search(r'id="owners-coverage">2 of 3</strong>', page)
    ops = row(page, 'data-owner="@ops-team"')
    expected = owned_open_gaps("@ops-team")
    untracked = sum(not (g.tracked or g.intended) for g in expected)
    cells = re.findall(r'<td class="num"[^>]*>(?:<a[^>]*>)?(\d+)', ops)
    assert cells == ["2", str(len(expected)), str(untracked)]


def test_pasted_yaml_replaces_the_rules_and_a_bad_file_changes_nothing(maintainer, runs):
    pasted = {"text": "/test/:\n  - '@everyone'\n", "yaml": "on"}
    page = text(maintainer.post(f"{P}/owners/import/", pasted, follow=True))
    assert "3 of 3 test files have owners" in page

    page = text(maintainer.post(f"{P}/owners/import/", {"text": "!/test/ @x\n"}, follow=True))

    assert "Owners not imported: The file has no rule parity can read" in page
    assert 'data-owner="@everyone"' in page
