"""The dashboard's pages and JSON endpoints through Django's test client: what each page says
for the scenario of ``dashboard_scenario``, their empty states, and who may triage."""

import datetime
import re
from html import unescape

import pytest
from django.contrib.staticfiles import finders
from django.utils import timezone

from parity.dashboard import views
from parity.dashboard.staticfiles import PLOTLY_DIR
from parity.models import Gap, Project, Reason, Run, TestCase, Triage
from parity.services.triage import TriageRequest, triages_create
from tests.conftest import FIXTURES_DIR
from tests.parity.dashboard.conftest import ISSUES, text
from tests.parity.dashboard_scenario import (
    BACKENDS,
    CUDA,
    DAY1,
    DAY2,
    ISSUE_URL,
    NEURON,
    WITH_ISSUE,
    A,
    B,
    C,
    runs_by_day,
    tid,
)

P = "/p/pytorch-xla"


def rows(html: str, table_id: str) -> list[str]:
    body = html.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]
    return re.findall(r"<tr\b.*?</tr>", body.split("<tbody>", 1)[1])


def cells(row: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td\b.*?</td>", row)]


# --- Empty states -----------------------------------------------------------------------------


@pytest.mark.django_db
def test_overview_without_projects_says_how_to_create_one(client):
    html = text(client.get("/"))
    assert "No projects yet" in html
    assert "python manage.py create_project pytorch-xla --backends" in html
    assert "plotly" not in html  # no chart, no charting library's bundle


@pytest.mark.parametrize("page", ["/", f"{P}/", f"{P}/gaps/", f"{P}/skip-reasons/", f"{P}/runs/"])
def test_a_project_without_uploads_shows_the_curl_line(client, project, page):
    html = text(client.get(page))
    assert "No uploads yet" in html
    assert 'curl -fsS -H "Authorization: Token $PARITY_TOKEN"' in html
    assert "-F project=pytorch-xla" in html
    assert "http://testserver/api/v1/uploads/" in html
    assert "python manage.py create_upload_token pytorch-xla" in html


def words(response) -> str:
    """What a reader sees of a page: its text without tags, whitespace collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", text(response)))


def test_a_project_with_only_incomplete_runs_says_so(client, upload_run):
    upload_run("cpu", {tid(A, 1): "passed"}, day=DAY1, complete=False)
    html = words(client.get(f"{P}/"))
    assert (
        "No complete run on master yet. Runs have arrived, but none on master is complete" in html
    )
    assert "No uploads yet" not in html


def test_complete_runs_on_another_branch_are_named_where_the_pages_are_empty(
    client, runs_on_master
):
    heatmap = words(client.get(f"{P}/"))
    assert (
        "No complete run on main yet. 2 complete runs on master: pytorch-xla compares main "
        "(and runs sent with no branch), so they do not count." in heatmap
    )
    assert "python manage.py update_project pytorch-xla --default-branch master" in heatmap

    overview = text(client.get("/"))
    tpu = re.search(r'<tr data-backend="tpu">.*?</tr>', overview).group()
    cells = [" ".join(re.sub(r"<[^>]+>", "", c).split()) for c in re.findall(r"<td\b.*?</td>", tpu)]
    assert "no complete run on main; 1 on master" in cells


@pytest.mark.django_db
@pytest.mark.parametrize(
    "page", [f"{P}/", f"{P}/gaps/", f"{P}/runs/", f"{P}/skip-reasons/", f"{P}/tests/1/"]
)
def test_an_unknown_project_is_404(admin_client, page):
    # Logged in; an anonymous visitor is sent to log in, as for a private project (test_access).
    assert admin_client.get(page).status_code == 404


# --- Overview ---------------------------------------------------------------------------------


def test_overview_card_per_backend(client, runs):
    html = text(client.get("/"))
    backends = re.findall(r'<tr data-backend="(\w+)">(.*?)</tr>', html)
    assert [name for name, _ in backends] == list(BACKENDS)
    by_name = {name: row for name, row in backends}
    assert "80 %" in by_name["gpu"] and "60 %" in by_name["neuron"] and "80 %" in by_name["tpu"]
    # Untracked gaps link to the gaps page, filtered.
    assert '?backend=neuron&tracked=untracked&open=1">4</a>' in by_name["neuron"]
    assert '?backend=tpu&tracked=untracked&open=1">1</a>' in by_name["tpu"]
    assert "7 untracked gaps" in html
    # The last upload's age and status; a link to the backend's worst files.
    assert "ago" in by_name["cpu"] and "Done" in by_name["cpu"]
    assert f'href="{P}/?sort=neuron"' in by_name["neuron"]
    # Each backend's score trend, an inline SVG line (no charting library to load).
    assert "plotly" not in html
    assert "<title>score of gpu, last 30 days: 80 % now, 80–90 %</title>" in by_name["gpu"]
    assert re.search(r'<polyline points="0\.0,[\d.]+ 140\.0,[\d.]+"', by_name["gpu"])
    assert "<title>score of neuron, last 30 days: 60 % now, 60 %</title>" in by_name["neuron"]
    assert "<svg" not in by_name["cpu"]  # the reference has no parity of its own


def test_overview_names_an_agreement_score_so(client, runs):
    from parity.services.projects import project_score_set

    project_score_set(project=Project.objects.get(slug="pytorch-xla"), definition="agree_any")

    html = text(client.get("/"))

    header = re.search(r"<thead>(.*?)</thead>", html, re.S)[1]
    assert 'title="agreement (any difference)">Agreement</th>' in header
    assert "Parity" not in header


def test_overview_data_is_the_score_trend_with_an_etag(client, runs):
    response = client.get("/overview.json")
    body = response.json()
    scores = body["projects"]["pytorch-xla"]
    assert scores["neuron"]["score"] == [0.6, 0.6]  # b1-b4 of 10 missing, then b1 skipped
    assert scores["gpu"]["score"] == [0.9, 0.8]
    assert [at[:10] for at in scores["gpu"]["at"]] == [DAY1, DAY2]
    assert response["Cache-Control"] == "max-age=60, private"  # who asks decides what it lists
    again = client.get("/overview.json", HTTP_IF_NONE_MATCH=response["ETag"])
    assert again.status_code == 304


# --- Heatmap ----------------------------------------------------------------------------------


def heat(html: str) -> dict[str, list[str]]:
    return {
        re.sub(r"<[^>]+>", "", row.split("</th>")[0]).strip(): cells(row)
        for row in rows(html, "heatmap")
    }


def test_heatmap_rows_columns_and_labels(client, runs):
    html = text(client.get(f"{P}/?sort=name"))
    header = html.split('id="heatmap"')[1].split("</thead>")[0]
    # Every backend but the reference sorts by its gaps; the reference has none to sort by.
    assert re.findall(r'title="Sort by the most gaps on (\w+)"', header) == list(BACKENDS[1:])
    # The reference's passed / tests; elsewhere, of the tests the reference passes, how many
    # pass: C's c3, which the reference skips too, is no gap on tpu.
    assert heat(html) == {
        A: ["4/4", "3/4", "4/4", "2/4"],
        B: ["4/4", "4/4", "0/4", "4/4"],
        C: ["2/3", "1/2", "2/2", "2/2"],
    }
    # The colour bin and the hover text of one cell; the link opens the file on that backend.
    cell = r'<td class="cell s(\w+)( absent)?" data-backend="neuron"\s*>\s*<a href="([^"]+)"'
    neuron_b = re.search(cell + r' title="([^"]+)"', html.split(f'data-name="{B}"')[1])
    assert neuron_b.group(1) == "0"
    assert neuron_b.group(3) == f"{P}/file/?path={B}&backend=neuron"
    assert neuron_b.group(4) == (
        f"neuron · {B}: 0 passed, 0 failed, 0 error, 1 skipped, 3 missing; "
        "of the 4 tests the reference passes, 0 pass here (4 gaps)"
    )


def test_heatmap_sorts_by_gaps_against_the_reference(client, runs):
    # Gaps on every backend: B 4 (neuron), A 3 (gpu 1, tpu 2), C 1 (gpu).
    assert list(heat(text(client.get(f"{P}/")))) == [B, A, C]
    assert list(heat(text(client.get(f"{P}/?sort=-worst")))) == [C, A, B]
    # By one backend: A and C have a gap each on gpu, C the lower parity (1/2); B none.
    assert list(heat(text(client.get(f"{P}/?sort=gpu")))) == [C, A, B]
    assert list(heat(text(client.get(f"{P}/?sort=-gpu")))) == [B, A, C]
    assert list(heat(text(client.get(f"{P}/?sort=-name")))) == [C, B, A]
    assert list(heat(text(client.get(f"{P}/?sort=bogus")))) == [B, A, C]


def test_files_with_nothing_to_compare_stay_last_in_either_direction(client, upload_run):
    # a.py: one gap on gpu; b.py: in parity; s.py: the reference skips it; n.py: gpu only.
    ran = {"a.py": ["passed", "passed"], "b.py": ["passed"], "s.py": [("skipped", "later")]}
    upload_run(
        "cpu",
        {f"test/{f}::T::test_{n}": o for f, outs in ran.items() for n, o in enumerate(outs)},
        day="2026-04-01",
    )
    gpu = {"test/a.py::T::test_1": ("failed", "boom"), "test/n.py::T::test_0": "passed"}
    upload_run(
        "gpu",
        {
            **{f"test/{f}::T::test_{n}": o for f, outs in ran.items() for n, o in enumerate(outs)},
            **gpu,
        },
        day="2026-04-01",
    )
    rows = ["test/a.py", "test/b.py", "test/n.py", "test/s.py"]
    for sort, first in [
        ("", rows[:2]),
        ("gpu", rows[:2]),
        ("-worst", rows[1::-1]),
        ("-gpu", rows[1::-1]),
    ]:
        assert list(heat(text(client.get(f"{P}/?sort={sort}")))) == first + rows[2:], sort
    assert list(heat(text(client.get(f"{P}/?sort=-name")))) == rows[::-1]


def test_heatmap_shows_the_sort_in_force_and_links_the_other_direction(client, runs):
    default = text(client.get(f"{P}/"))
    sorts = default.split('id="heatmap-sort"')[1].split("</span>\n")[0]
    assert re.search(r'href="\?sort=-worst" aria-current="true"[^>]*>most gaps first', sorts)
    by_gpu = text(client.get(f"{P}/?sort=gpu"))
    header = by_gpu.split('id="heatmap"')[1].split("</thead>")[0]
    assert re.search(r'aria-sort="ascending">\s*<a href="\?sort=-gpu"[^>]*>gpu', header)
    reversed_gpu = text(client.get(f"{P}/?sort=-gpu"))
    header = reversed_gpu.split('id="heatmap"')[1].split("</thead>")[0]
    assert re.search(r'aria-sort="descending">\s*<a href="\?sort=gpu"[^>]*>gpu', header)
    # Filtering keeps the sort in force.
    assert '<input type="hidden" name="sort" value="-gpu">' in reversed_gpu


def test_heatmap_filter_folders_and_drill_down(client, runs):
    assert list(heat(text(client.get(f"{P}/?q=OPS/")))) == [B, A]
    html = text(client.get(f"{P}/?q=nothing-like-this"))
    assert "No file matches “nothing-like-this”" in html

    # A folder's row totals its whole subtree: test/ holds test/ops/ and test/test_c.py.
    folders = text(client.get(f"{P}/?dir=1&sort=name"))
    assert heat(folders) == {
        "test/": ["10/11", "8/10", "6/10", "8/10"],
        "test/ops/": ["8/8", "7/8", "4/8", "6/8"],
    }
    assert 'href="?sort=name&folder=test%2Fops"' in folders  # drill into a folder
    drilled = text(client.get(f"{P}/?folder=test/ops&sort=name"))
    assert list(heat(drilled)) == [A, B]
    assert "all folders" in drilled
    assert list(heat(text(client.get(f"{P}/?folder=test&sort=name")))) == [A, B, C]


def test_a_folder_with_the_trailing_slash_its_row_shows_is_that_folder(client, runs):
    drilled = text(client.get(f"{P}/?folder=test/ops/&sort=name"))
    assert list(heat(drilled)) == [A, B]
    assert "2 of 2" in drilled and "No complete run yet" not in drilled
    empty = text(client.get(f"{P}/?folder=test/none/"))
    assert "No test file under <code>test/none/</code>" in empty
    assert "No complete run yet" not in empty


def test_the_owners_page_is_its_own_tab(client, runs):
    tabs = text(client.get(f"{P}/owners/")).split('class="tabs"', 1)[1].split("</nav>", 1)[0]
    assert re.findall(r'aria-current="page">([^<]+)<', tabs) == ["Owners"]


# --- File and test detail ---------------------------------------------------------------------


def test_file_detail_on_a_backend(client, runs):
    html = text(client.get(f"{P}/file/?path={A}&backend=tpu"))
    grid = {
        re.sub(r"<[^>]+>", "", r.split("</th>")[0]).strip(): cells(r)
        for r in rows(html, "file-grid")
    }
    # The chosen backend's worst first: error, then skipped, then passed.
    assert list(grid) == ["TestA::test_a4", "TestA::test_a2", "TestA::test_a1", "TestA::test_a3"]
    cpu, gpu, neuron, tpu = grid["TestA::test_a2"]
    assert cpu.startswith("✓ passed") and gpu.startswith("✗ failed")
    assert "AssertionError: 1 != 2" in gpu and "untracked" in gpu
    assert "⊘ skipped" in tpu and WITH_ISSUE in tpu and "pytorch/xla#4242" in tpu
    assert "tracked" in tpu
    assert f'href="{ISSUE_URL}"' in html
    # Why tests do not pass on tpu: each reason, its tests and the issue tracking it.
    reasons = html.split('id="reasons"')[1].split("</section>")[0]
    assert "RuntimeError: device lost" in reasons and WITH_ISSUE in reasons
    assert "no issue" in reasons


def test_file_detail_says_missing_for_missing_tests(client, runs):
    html = text(client.get(f"{P}/file/?path={B}&backend=neuron"))
    grid = {
        re.sub(r"<[^>]+>", "", r.split("</th>")[0]).strip(): cells(r)
        for r in rows(html, "file-grid")
    }
    assert list(grid)[0] == "TestB::test_b1"  # skipped before missing
    assert grid["TestB::test_b1"][2].startswith("⊘ skipped") and NEURON in grid["TestB::test_b1"][2]
    assert grid["TestB::test_b2"][2].startswith("– missing")
    assert "gap: missing (passes on the reference)" in grid["TestB::test_b2"][2]
    reasons = html.split('id="reasons"')[1].split("</section>")[0]
    assert "Not in neuron's current run, though they pass on the reference" in reasons


@pytest.mark.django_db
def test_file_detail_of_an_unknown_file_is_404_and_without_path_goes_back(client, runs):
    assert client.get(f"{P}/file/?path=test/nope.py").status_code == 404
    response = client.get(f"{P}/file/")
    assert (response.status_code, response["Location"]) == (302, f"{P}/")


def test_test_detail_timeline_reason_and_triage_state(client, runs):
    test = Gap.objects.get(backend__name="tpu", test__key=tid(A, 2)).test
    html = text(client.get(f"{P}/tests/{test.pk}/"))
    lines = {r.split('data-backend="')[1].split('"')[0]: r for r in rows(html, "test-lines")}
    assert list(lines) == list(BACKENDS)
    assert "✓✓" in cells(lines["cpu"])[2].replace(" ", "")  # two passing runs
    assert "⊘⊘" in cells(lines["tpu"])[2].replace(" ", "")
    assert WITH_ISSUE in lines["tpu"] and "pytorch/xla#4242" in lines["tpu"]
    assert "skipped" in cells(lines["tpu"])[1] and "tracked" in cells(lines["tpu"])[1]
    assert "failed" in cells(lines["gpu"])[1] and "untracked" in cells(lines["gpu"])[1]
    assert f"{DAY1} 12:00" in lines["tpu"]  # each mark's run, in its hover text


def test_test_detail_of_an_intended_gap_shows_its_note(admin_client, runs):
    """An intended gap's test page once answered 500: its triage badge read the note through a
    triage the page holds as a kind's name, not a row."""
    gap = Gap.objects.get(backend__name="tpu", test__key=tid(A, 2))
    body = {"kind": "intended", "scope": "test", "test": gap.test_id, "backend": "tpu"}
    body["note"] = "XLA lowers it differently"
    assert admin_client.post(f"{P}/triage/", body).status_code == 302
    html = text(admin_client.get(f"{P}/tests/{gap.test_id}/"))
    lines = {r.split('data-backend="')[1].split('"')[0]: r for r in rows(html, "test-lines")}
    assert 'class="badge intended" title="XLA lowers it differently">intended<' in lines["tpu"]


def test_test_detail_says_how_to_run_the_test_on_each_backend(client, runs, xla):
    xla.backends.filter(name="tpu").update(
        reproduce_command="PJRT_DEVICE=TPU python3 {file} {class}.{name}"
    )
    xla.backends.filter(name="cpu").update(reproduce_command="pytest '{nodeid}'")
    test = Gap.objects.get(backend__name="tpu", test__key=tid(A, 2)).test

    html = text(client.get(f"{P}/tests/{test.pk}/"))

    section = html.split('id="reproduce"')[1].split("</section>")[0]
    commands = {
        backend: re.sub(r"<[^>]+>", "", row).strip()
        for backend, row in re.findall(r'<tr data-backend="(\w+)">(.*?)</tr>', section)
    }
    assert commands == {
        "cpu": f"cpu pytest '{A}::TestA::test_a2' Copy",
        "gpu": "gpu No command for gpu yet: the project's admin sets one on the backend "
        "(placeholders {file}, {class}, {name}, {nodeid}).",
        "neuron": "neuron No command for neuron yet: the project's admin sets one on the "
        "backend (placeholders {file}, {class}, {name}, {nodeid}).",
        "tpu": f"tpu PJRT_DEVICE=TPU python3 {A} TestA.test_a2 Copy",
    }
    assert 'data-copy="reproduce-tpu" hidden>Copy</button>' in html  # shown by its script
    assert "parity/copy" in html


@pytest.mark.django_db
def test_test_detail_of_a_test_run_in_several_suites_names_its_suite(client, project, ingest):
    """Playwright's browser projects: each is a test of its own, and its runner still knows it
    by its name without the suite."""
    project.backends.filter(name="cpu").update(reproduce_command="npx playwright test -g '{name}'")
    xml = b"<testsuites>%s</testsuites>" % b"".join(
        b'<testsuite name="example.spec.ts" hostname="%s">'
        b'<testcase classname="example.spec.ts" name="has title"/></testsuite>' % host
        for host in (b"chromium", b"firefox")
    )
    ingest(("playwright.xml", xml))
    test = TestCase.objects.get(name__endswith="@ firefox]")

    html = text(client.get(f"{P}/tests/{test.pk}/"))

    assert (
        '<h1 class="path">example.spec.ts::has title [suite: example.spec.ts @ firefox]</h1>'
        in html
    )
    assert "this one ran in <strong>example.spec.ts @ firefox</strong>" in html
    assert "npx playwright test -g 'has title'</code>" in html
    # No file: the crumbs go from the heatmap straight to the test.
    assert "heatmap</a> › has title [suite: example.spec.ts @ firefox]</p>" in html


def test_test_detail_of_a_test_in_one_suite_names_no_suite(client, runs):
    test = Gap.objects.get(backend__name="tpu", test__key=tid(A, 2)).test
    assert 'id="test-suite"' not in text(client.get(f"{P}/tests/{test.pk}/"))


def test_the_exemptions_page_has_each_id_once(admin_client, runs):
    # Its filter and its new-exemption form both have a kind and backends.
    html = text(admin_client.get(f"{P}/exemptions/"))
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert "new_kind" in ids
    assert sorted(i for i in set(ids) if ids.count(i) > 1) == []


RETIRED_NAMES = ("never run", "not in the run", "never ran", "not in this run")


def test_a_missing_test_has_one_name_the_docs_define_on_every_page(client, runs):
    # docs/semantics.md: the reference passes it and the backend's run lacks it: `missing`.
    gap = Gap.objects.filter(state="missing", is_open=True).first()
    pages = ["/", f"{P}/queue/", f"{P}/gaps/?open=1", f"{P}/tests/{gap.test_id}/"]
    for page in pages:
        html = " ".join(re.sub(r"<[^>]+>", " ", text(client.get(page))).split())
        assert not [name for name in RETIRED_NAMES if name in html], page
    assert "missing: no reason" in text(client.get(f"{P}/gaps/?open=1"))


# --- Skip reasons -----------------------------------------------------------------------------


def test_skip_reasons_table_the_most_gaps_first_and_common_reasons_last(client, runs):
    html = text(client.get(f"{P}/skip-reasons/"))
    table = [cells(r) for r in rows(html, "reasons-table")]
    # Its category by the default skip rules; per backend: tests skipped, then the gaps it
    # causes there ("1 gap": the reference passes).
    assert [(r[0], r[1], r[2:6], r[6], r[8]) for r in table] == [
        (NEURON, NOT_IMPLEMENTED, ["0", "0", "1 1 gap", "0"], "1", "untracked"),
        (WITH_ISSUE, NOT_IMPLEMENTED, ["0", "0", "0", "1 1 gap"], "1", "tracked"),
        # The reference skips the same test: no gap anywhere, so nothing to track.
        (CUDA, "not on this hardware by design", ["1", "0", "0", "1"], "0", "common"),
    ]
    assert table[1][7] == "pytorch/xla#4242"
    assert table[2][9] == DAY1 and table[2][10] == DAY2  # first and last seen
    only_neuron = text(client.get(f"{P}/skip-reasons/?backend=neuron"))
    assert [cells(r)[0] for r in rows(only_neuron, "reasons-table")] == [NEURON]
    assert 'data-url="/p/pytorch-xla/skip-reasons.json?backend=neuron"' in only_neuron


NOT_IMPLEMENTED = "not implemented on the backend needs work"


def test_skip_reasons_chart_data(client, runs):
    body = client.get(f"{P}/skip-reasons.json?days=7&by=reason").json()
    # The history starts on day 1, inside the 7-day window: so does the chart.
    today = datetime.date.fromisoformat(DAY2) + datetime.timedelta(days=1)
    assert body["days"] == [DAY1, DAY2, str(today)]
    series = {s["name"]: s["counts"] for s in body["series"]}  # day 1, day 2, today
    assert series == {
        CUDA: [2, 2, 2],  # cpu and tpu, carried to today by the current runs
        WITH_ISSUE: [1, 1, 1],
        "not implemented yet": [1, 0, 0],  # fixed on day 2
        NEURON: [0, 1, 1],
    }
    tpu = client.get(f"{P}/skip-reasons.json?days=7&backend=tpu&by=reason").json()
    assert {s["name"] for s in tpu["series"]} == {CUDA, WITH_ISSUE, "not implemented yet"}


def test_skip_reasons_chart_stacks_categories_by_default(client, runs):
    body = client.get(f"{P}/skip-reasons.json?days=7").json()
    assert body["by"] == "category"
    series = {(s["name"], s["disposition"]): s["counts"] for s in body["series"]}
    assert series == {
        # no neuron kernel, the issue's "Not supported on TPU", not implemented yet (day 1)
        ("not implemented on the backend", "needs_work"): [2, 2, 2],
        ("not on this hardware", "intended"): [2, 2, 2],  # needs cuda, on cpu and tpu
    }


# --- Gaps and runs ----------------------------------------------------------------------------


def gap_rows(html: str, section: str) -> list[tuple[str, str, str]]:
    body = html.split(f'id="{section}"')[1].split("</section>")[0]
    found = []
    for row in re.findall(r"<tr data-backend.*?</tr>", body):
        # Where else the test fails is a line of its own under the test (test_families.py).
        c = cells(re.sub(r'<div class="also-failing.*?</div>', "", row, flags=re.S))
        found.append((c[0], c[1].rsplit("::", 1)[1], c[2]))
    return found


def test_gaps_new_and_fixed_since_a_day_with_filters(client, runs):
    html = text(client.get(f"{P}/gaps/"))  # default: the last 7 days
    assert sorted(gap_rows(html, "new-gaps")) == sorted(
        [
            ("gpu", "test_a2", "failed"),
            ("gpu", "test_c2", "failed"),
            ("neuron", "test_b1", "skipped"),
            ("neuron", "test_b2", "missing"),
            ("neuron", "test_b3", "missing"),
            ("neuron", "test_b4", "missing"),
            ("tpu", "test_a2", "skipped"),
            ("tpu", "test_a4", "error"),
        ]
    )
    assert gap_rows(html, "fixed-gaps") == [("tpu", "test_a3", "skipped")]

    since_day2 = text(client.get(f"{P}/gaps/?since={DAY2}"))
    assert gap_rows(since_day2, "new-gaps") == [("gpu", "test_c2", "failed")]
    assert f'value="{DAY2}"' in since_day2  # the form shows the filter the URL holds

    untracked_neuron = text(client.get(f"{P}/gaps/?backend=neuron&tracked=untracked&state=missing"))
    assert [g[1] for g in gap_rows(untracked_neuron, "new-gaps")] == [
        "test_b2",
        "test_b3",
        "test_b4",
    ]
    tracked = text(client.get(f"{P}/gaps/?tracked=tracked"))
    assert gap_rows(tracked, "new-gaps") == [("tpu", "test_a2", "skipped")]
    assert "pytorch/xla#4242" in tracked
    none = text(client.get(f"{P}/gaps/?since={DAY2}&backend=tpu"))
    assert "No new gap on tpu since" in none and "See every open gap" in none


def test_gaps_page_says_what_it_counts_and_opens_every_open_gap_in_one_click(client, runs):
    week = text(client.get(f"{P}/gaps/?tracked=tracked"))  # the README's link
    assert "Opened in the last 7 days, still open" in week
    assert "1 gap open in all with these filters:" in week

    day2 = text(client.get(f"{P}/gaps/?since={DAY2}"))  # the digest's links name their day
    assert f"Opened since {DAY2}, still open" in day2
    assert len(gap_rows(day2, "new-gaps")) == 1
    assert "8 gaps open in all with these filters, the older ones not listed here" in day2
    every = re.search(r'<a href="([^"]*)" id="every-open-gap">every open gap</a>', day2)
    assert every and "open=1" in every[1]

    every_open = text(client.get(f"{P}/gaps/{unescape(every[1])}"))
    assert "Every open gap, however old" in every_open
    assert len(gap_rows(every_open, "new-gaps")) == 8
    assert f"Only those opened since {DAY2}" in every_open


def test_runs_page_past_its_last_page_links_the_first_and_says_just_now(client, runs):
    html = text(client.get(f"{P}/runs/?page=40"))
    assert "No runs on page 40." in html
    first = re.search(r'<a href="([^"]*)" id="first-page">Go to the first page</a>', html)
    assert first and "page=" not in first[1]
    Run.objects.filter(pk=runs["tpu2"]).update(started_at=timezone.now())
    html = text(client.get(f"{P}/runs/"))
    # "\b": a run of 40 minutes ago elsewhere on the page is no "0 minutes ago".
    assert "just now" in html and not re.search(r"\b0 minutes ago", html)


def test_runs_page_lists_runs_uploads_and_errors_in_plain_words(client, runs, ingest):
    response = ingest(
        ("broken.xml", b"this is not XML"), backend="gpu", commit="f" * 40, run="broken-gpu",
        branch="master", timestamp=f"{DAY2}T13:00:00Z",
    )  # fmt: skip
    assert response.status_code == 202
    html = text(client.get(f"{P}/runs/"))
    table = rows(html, "runs-table")
    assert len(table) == 9
    broken = cells(table[0])
    assert broken[1] == "gpu" and "every upload failed; this run will not count" in broken[3]
    assert "failed" in broken[5] and "broken.xml" in broken[5]
    current = cells(next(r for r in table if f'data-run="{runs["neuron2"]}"' in r))
    assert "current" in current[3] and "complete" in current[3]
    assert current[6:11] == ["8", "7", "1", "0", "0"]  # tests, passed, skipped, failed, error
    assert len(rows(text(client.get(f"{P}/runs/?backend=tpu")), "runs-table")) == 2


# --- Triage -----------------------------------------------------------------------------------


def test_triage_forms_are_for_logged_in_users_only(client, admin_client, runs):
    assert "Exempt…</summary>" not in text(client.get(f"{P}/gaps/"))
    assert "Log in</a> to triage gaps" in text(client.get(f"{P}/gaps/"))
    assert "Exempt…</summary>" in text(admin_client.get(f"{P}/gaps/"))
    assert "Exempt…</summary>" in text(admin_client.get(f"{P}/skip-reasons/"))


def test_triage_needs_login(client, runs):
    gap = Gap.objects.get(backend__name="gpu", test__key=tid(A, 2), is_open=True)
    body = {"kind": "tracked", "scope": "gap", "gap": gap.pk, "issue_url": ISSUE_URL,
            "next": f"{P}/gaps/?backend=gpu"}  # fmt: skip
    response = client.post(f"{P}/triage/", body)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")
    assert "gaps/%3Fbackend%3Dgpu" in response["Location"]
    assert not Triage.objects.exists()
    assert client.get(f"{P}/triage/").status_code == 405


def test_triage_links_an_issue_and_the_numbers_move(admin_client, runs):
    gap = Gap.objects.get(backend__name="gpu", test__key=tid(A, 2), is_open=True)
    body = {"kind": "tracked", "scope": "gap", "gap": gap.pk, "test": gap.test_id,
            "backend": "gpu", "issue_url": "https://github.com/pytorch/xla/issues/99",
            "next": f"{P}/gaps/?backend=gpu"}  # fmt: skip
    response = admin_client.post(f"{P}/triage/", body, follow=True)
    assert response.redirect_chain == [(f"{P}/gaps/?backend=gpu", 302)]
    html = text(response)
    assert "Exemption saved: linked to its issue" in html
    assert "pytorch/xla#99" in html
    gap.refresh_from_db()
    assert gap.tracked and gap.triage.created_by.username == "admin"
    assert '?backend=gpu&tracked=untracked&open=1">1</a>' in text(admin_client.get("/"))


def test_triage_a_reason_as_intended(admin_client, runs):
    cuda = Reason.objects.get(text=CUDA)
    body = {"kind": "intended", "scope": "reason", "reason": cuda.pk, "note": "CUDA only"}
    response = admin_client.post(f"{P}/triage/", body)
    assert (response.status_code, response["Location"]) == (302, f"{P}/gaps/")
    row = [cells(r) for r in rows(text(admin_client.get(f"{P}/skip-reasons/")), "reasons-table")]
    assert [(r[0].split(" Exempt…")[0].strip(), r[8]) for r in row][-1] == (CUDA, "intended")
    # "intended" names the triage alone: a skip rule's disposition by design is "by design".
    html = text(admin_client.get(f"{P}/skip-reasons/"))
    by_design = re.findall(r'<span class="badge disp-intended">([^<]*)</span>', html)
    assert by_design and set(by_design) == {"by design"}
    assert [r[1].split()[-2:] for r in row if CUDA in r[0]] == [["by", "design"]]


def test_a_reasons_gap_counts_open_its_gaps_and_the_gaps_list_says_why_intended(admin_client, runs):
    neuron = Reason.objects.get(text=NEURON)
    gaps_url = f"{P}/gaps/?open=1&reason={neuron.pk}"
    table = rows(text(admin_client.get(f"{P}/skip-reasons/")), "reasons-table")
    row = next(r for r in table if f'data-reason="{neuron.pk}"' in r)
    assert f'href="{gaps_url}&backend=neuron">1 gap</a>' in row  # its gaps on neuron
    assert re.search(rf'href="{re.escape(gaps_url)}&backend="\s*><strong>1</strong></a>', row)

    # A category's gap counts open its skipped gaps.
    html = text(admin_client.get(f"{P}/skip-reasons/"))
    category = next(r for r in rows(html, "categories-table") if "not implemented" in r)
    total, untracked = re.findall(r'href="([^"]+)"', category)
    listed = gap_rows(text(admin_client.get(total)), "new-gaps")
    assert (cells(category)[2], len(listed)) == ("2", 2)
    assert untracked == total.replace("open=1&", "open=1&tracked=untracked&")

    body = {"kind": "intended", "scope": "reason", "reason": neuron.pk, "note": "no Neuron op"}
    assert admin_client.post(f"{P}/triage/", body).status_code == 302
    listed = text(admin_client.get(gaps_url))
    (gap,) = re.findall(r'<tr data-backend="neuron".*?</tr>', listed, re.S)
    assert '<span class="badge intended" title="no Neuron op">intended</span>' in gap
    assert '<span class="muted intended-note">no Neuron op</span>' in gap


def test_triage_errors_are_shown_not_raised(admin_client, runs):
    gap = Gap.objects.get(backend__name="gpu", test__key=tid(A, 2), is_open=True)
    missing_url = {
        "kind": "tracked",
        "scope": "gap",
        "gap": gap.pk,
        "next": "https://evil.example/",
    }
    response = admin_client.post(f"{P}/triage/", missing_url, follow=True)
    assert response.redirect_chain[-1][0] == f"{P}/gaps/"  # never off-site
    refusal = "Exemption not saved: A tracked exemption needs the URL of an issue that tracks it."
    assert refusal in text(response)
    no_target = {"kind": "intended", "scope": "reason", "note": "x"}
    html = text(admin_client.post(f"{P}/triage/", no_target, follow=True))
    assert "Exemption not saved: Nothing to triage for 'reason'." in html
    assert not Triage.objects.exists()


# --- Static files -----------------------------------------------------------------------------


def test_plotly_is_served_from_the_installed_package():
    found = finders.find("parity/vendor/plotly.min.js")
    assert found == str(PLOTLY_DIR / "plotly.min.js")
    listed = [
        (storage.prefix, path)
        for finder in finders.get_finders()
        for path, storage in finder.list(None)
        if path.endswith("plotly.min.js")
    ]
    assert listed == [("parity/vendor", "plotly.min.js")]


# --- Exemptions -------------------------------------------------------------------------------


def exemption_rows(html: str) -> dict[int, list[str]]:
    """Per triage id, its cells' text, each element's text apart (a block reads as a word)."""
    return {
        int(re.search(r'data-triage="(\d+)"', row)[1]): [
            " ".join(re.sub(r"<[^>]+>", " ", c).split()) for c in re.findall(r"<td\b.*?</td>", row)
        ]
        for row in rows(html, "exemptions-table")
    }


def test_exemptions_page_lists_every_target_with_why_who_and_when(client, runs, exemptions):
    html = text(client.get(f"{P}/exemptions/"))
    listed = exemption_rows(html)
    made = {name: t.pk for name, t in exemptions.items()}
    # Newest first.
    assert list(listed) == [made[n] for n in reversed(list(made))]
    today = str(exemptions["test"].created_at.date())
    assert listed[made["test"]] == [
        "tracked", tid(A, 4) + " one test", "tpu", "pytorch/xla#501", "never", "—",
        f"maintainer {today}",
    ]  # fmt: skip
    reason = listed[made["reason"]]
    assert reason[:4] == ["intended stale", f"“{CUDA}” every test skipped for this reason",
                          "every backend", "CUDA only"]  # fmt: skip
    assert listed[made["file"]][1:4] == [
        f"{B} every test of the matching files", "neuron", "pytorch/xla#502",
    ]  # fmt: skip
    glob = listed[made["glob"]]
    assert glob[:3] == ["quarantine", "test/ops/*.py::TestA::test_a2 matching tests", "gpu"]
    assert glob[4] == str(exemptions["glob"].expires_on)
    assert listed[made["stale"]][0] == "intended stale"
    expired = listed[made["expired"]]
    assert expired[2] == "gpu, tpu"
    assert expired[4] == f"{exemptions['expired'].expires_on} expired"
    assert f'href="{ISSUES}501"' in html
    assert f'href="{P}/tests/{exemptions["test"].test_id}/"' in html
    # A reader sees no form and no remove button, and is told how to get them.
    assert "New exemption" not in html and "Remove</button>" not in html
    assert "to add or remove exemptions" in html
    assert f'<a href="{P}/exemptions/" aria-current="page">Exemptions</a>' in html


@pytest.mark.parametrize(
    "query, expected",
    [
        ("backend=neuron", ["stale", "file", "reason"]),  # naming neuron, or every backend
        ("backend=gpu", ["expired", "stale", "glob", "reason"]),
        ("kind=intended", ["stale", "reason"]),
        ("kind=quarantine", ["glob"]),
        ("expired=yes", ["expired"]),
        ("expired=no", ["stale", "glob", "file", "reason", "test"]),
        ("stale=yes", ["stale", "reason"]),
        ("stale=no&kind=tracked", ["expired", "file", "test"]),
        ("kind=bogus&stale=maybe", ["expired", "stale", "glob", "file", "reason", "test"]),
    ],
)
def test_exemptions_page_filters(client, runs, exemptions, query, expected):
    html = text(client.get(f"{P}/exemptions/?{query}"))
    names = {t.pk: name for name, t in exemptions.items()}
    assert [names[pk] for pk in exemption_rows(html)] == expected


def test_exemptions_page_says_when_no_exemption_matches(client, runs, exemptions):
    html = text(client.get(f"{P}/exemptions/?backend=cpu&kind=quarantine"))
    assert "No exemption applies on cpu of kind quarantine." in html


def test_exemptions_page_is_paginated(client, xla, runs):
    requests = [
        TriageRequest(kind="intended", match=f"test/gone_{n:02}.py", note=f"n{n}")
        for n in range(53)
    ]
    triages_create(project=xla, requests=requests)
    first = text(client.get(f"{P}/exemptions/"))
    assert len(exemption_rows(first)) == 50
    assert "page 1 of 2" in first and 'href="?page=2"' in first
    second = text(client.get(f"{P}/exemptions/?page=2"))
    assert [c[1] for c in exemption_rows(second).values()] == [
        f"test/gone_{n:02}.py every test of the matching files" for n in (2, 1, 0)
    ]


def backend_files(html: str) -> tuple[str, list[str], str]:
    section = html.split('id="backend-files"')[1].split("</section>")[0]
    files = re.findall(r"<li><a [^>]*>([^<]+)</a>", section.split('id="files-list"')[1])
    heading = re.sub(r"<[^>]+>", "", section.split("<h2>")[1].split("</h2>")[0]).strip()
    return heading, files, section


def test_exemptions_page_lists_the_files_ci_runs_on_a_backend(client, runs, exemptions):
    # Neuron: the reference's three files but B, which a file-level exemption leaves out.
    heading, files, section = backend_files(text(client.get(f"{P}/exemptions/?files=neuron")))
    assert (heading, files) == ("Test files CI runs on neuron 2", [A, C])
    assert "current run, 3 files," in section
    told = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", section.split('id="files-told"')[1]))
    assert told.startswith(">2 told to run: neuron's current run ran 2 of them.")
    removed = section.split('id="removed-files"')[1].split("</ul>")[0]
    assert f'data-triage="{exemptions["file"].pk}"' in removed
    assert f"<code>{B}</code> leaves out that file" in removed
    assert f'href="{ISSUES}502" rel="noopener">pytorch/xla#502</a>' in removed
    assert "manifest/?backend=neuron&format=files" in section
    # The expired exemption of test_c.py no longer leaves it out on gpu.
    assert backend_files(text(client.get(f"{P}/exemptions/?files=gpu")))[1] == [A, B, C]
    # By default: the backend filtered on, else the first backend compared with the reference.
    assert backend_files(text(client.get(f"{P}/exemptions/?backend=tpu")))[0].endswith("tpu 3")
    assert backend_files(text(client.get(f"{P}/exemptions/")))[0].endswith("gpu 3")


# --- Skips with no reason, expected failures, real test IDs -----------------------------------

REASONS = FIXTURES_DIR / "dashboard"


@pytest.fixture
def quiet_skips(xla, ingest, eager_errors_propagate) -> None:
    """test/test_d.py on cpu (the reference) and tpu: see the fixtures' comments."""
    for backend in ("cpu", "tpu"):
        response = ingest(
            REASONS / f"reasons_{backend}.xml",
            backend=backend,
            branch="master",
            complete="true",
            timestamp=f"{DAY2}T12:00:00Z",
        )
        assert response.status_code == 202, response.content


def test_skips_with_no_reason_come_first_even_causing_no_gap(client, upload_run):
    # The lede says so: nothing says why they skip, so they are the first to fix.
    t1, t2 = tid(A, 1), tid(A, 2)
    upload_run("cpu", {t1: "passed", t2: ("skipped", "")}, day=DAY1)
    upload_run("tpu", {t1: ("skipped", "not on tpu"), t2: ("skipped", "")}, day=DAY1)
    html = text(client.get(f"{P}/skip-reasons/"))
    assert "Skips that gave no reason come first" in html
    table = [cells(r) for r in rows(html, "reasons-table")]
    assert [(r[0], r[8]) for r in table] == [
        ("no reason given (the skip message is empty)", "common"),
        ("not on tpu", "untracked"),
    ]


def test_skips_with_no_reason_come_first_and_xfails_are_told_apart(client, quiet_skips):
    table = [cells(r) for r in rows(text(client.get(f"{P}/skip-reasons/")), "reasons-table")]

    # Reason; category; cpu, gpu, neuron, tpu (tests, gaps); gaps; status.
    xfail = "expected failure needs work"
    assert [(r[0], r[1], r[2:6], r[6], r[8]) for r in table] == [
        ("no reason given (the skip message is empty)", "no reason given unknown",
         ["0", "0", "0", "2 2 gaps"], "2", "untracked"),
        ("xfail no reason given (the xfail message is empty)", xfail,
         ["0", "0", "0", "1 1 gap"], "1", "untracked"),
        ("xfail XLA lowers it wrong", xfail, ["0", "0", "0", "1 1 gap"], "1", "untracked"),
        ("xfail rounds differently everywhere", xfail, ["1", "0", "0", "1"], "0", "common"),
    ]  # fmt: skip
    # No Reason row holds the empty message's days: said so, not a bare dash.
    assert table[0][9:] == ["not recorded for skips without a message"]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d", day) for r in table[1:] for day in r[9:11])


def test_a_file_page_counts_every_skip_and_names_xfails(client, quiet_skips):
    html = text(client.get(f"{P}/file/?path=test/test_d.py&backend=tpu"))

    summary = {
        re.findall(r"<th[^>]*>(.*?)</th>", r)[0]: cells(r) for r in rows(html, "file-summary")
    }
    assert summary["skipped"] == ["0", "0", "0", "2"]
    assert summary["xfail"] == ["1", "0", "0", "3"]
    reasons = [cells(r) for r in rows(html, "file-reasons")]
    # Every skip on tpu is in a row: 2 + 1 + 1 + 1 = its 5 tests.
    assert [(r[0], r[1], r[2]) for r in reasons] == [
        ("no reason given (the message is empty)", "skipped", "2"),
        ("expected failure", "xfail", "1"),
        ("expected failure: XLA lowers it wrong", "xfail", "1"),
        ("expected failure: rounds differently everywhere", "xfail", "1"),
    ]
    grid = {re.sub(r"<[^>]+>", "", r.split("</th>")[0]).strip(): cells(r) for r in
            rows(html, "file-grid")}  # fmt: skip
    assert grid["test_xfail_why"][3].startswith("⊗ xfail")
    assert (
        grid["test_quiet"][3].startswith("⊘ skipped") and "no reason given" in grid["test_quiet"][3]
    )
    assert "test_colons[a::b:]" in grid  # the real name, not the key's escaped one


def test_pages_show_a_tests_real_id_not_its_escaped_key(client, quiet_skips):
    test = TestCase.objects.get(name="test_colons[a::b:]")
    assert test.key == "test/test_d.py::test_colons[a:\\:b:]"  # escaped inside only

    page = text(client.get(f"{P}/tests/{test.pk}/"))
    assert '<h1 class="path">test/test_d.py::test_colons[a::b:]</h1>' in page
    gaps = text(client.get(f"{P}/gaps/?open=1"))
    assert "test/test_d.py::test_colons[a::b:]<" in gaps
    assert test.key not in page and test.key not in gaps
    states = dict(re.findall(r"(test_xfail_\w+)</a></td> <td><span [^>]*>(\w+)<", gaps))
    assert states == {"test_xfail_quiet": "xfail", "test_xfail_why": "xfail"}


# --- Backend overlap ----------------------------------------------------------------------------


def test_matrix_compares_every_pair_and_opens_the_pair(client, runs):
    html = text(client.get(f"{P}/matrix/"))
    assert 'aria-current="page" title="Backend overlap">Overlap</a>' in html
    tests = {
        r.split('data-backend="')[1].split('"')[0]: cells(r) for r in rows(html, "test-matrix")
    }
    # Row cpu, columns cpu (its totals), gpu, neuron, tpu. Neuron's run lacks test_b2-b4 and
    # skips test_b1: 8 of cpu's 11 tests are in both runs, 4 pass on cpu and not on neuron.
    assert tests["cpu"] == [
        "11 tests, 10 pass",
        "100 % 2 pass on cpu, not on gpu",
        "73 % 4 pass on cpu, not on neuron",
        "100 % 2 pass on cpu, not on tpu",
    ]
    assert tests["neuron"][0] == "73 % 1 pass on neuron, not on cpu"  # test_c3: cpu skips it
    files = {
        r.split('data-backend="')[1].split('"')[0]: cells(r) for r in rows(html, "file-matrix")
    }
    assert files["cpu"] == ["3 files", *["100 % 0 only on cpu"] * 3]
    assert f'href="{P}/matrix/pair/?a=cpu&b=neuron#passes-only-a"' in html
    assert f'href="{P}/matrix.csv"' in html


def test_a_pair_lists_what_one_backend_has_and_the_other_lacks(client, runs):
    html = text(client.get(f"{P}/matrix/pair/?a=cpu&b=neuron"))
    section = html.split('id="passes-only-a"')[1].split("</section>")[0]
    listed = [cells(r) for r in re.findall(r"<tr>.*?</tr>", section.split("<tbody>")[1])]
    assert listed == [
        [tid(B, 1), "⊘ skipped", NEURON],
        [tid(B, 2), "– missing", ""],
        [tid(B, 3), "– missing", ""],
        [tid(B, 4), "– missing", ""],
    ]
    assert "None: every test file cpu runs, neuron runs too." in html
    assert f'href="{P}/matrix/pair/tests.csv?a=cpu&b=neuron"' in html


@pytest.mark.parametrize("query", ["a=cpu&b=cpu", "a=cpu&b=nope", "a=cpu", ""])
def test_a_pair_of_one_backend_or_an_unknown_one_goes_back_to_the_matrix(client, runs, query):
    response = client.get(f"{P}/matrix/pair/?{query}")
    assert (response.status_code, response["Location"]) == (302, f"{P}/matrix/")


def test_matrix_and_pair_lists_download_as_csv(client, runs):
    matrix = client.get(f"{P}/matrix.csv")
    assert matrix["Content-Type"] == "text/csv; charset=utf-8"
    assert 'filename="pytorch-xla-backend-matrix.csv"' in matrix["Content-Disposition"]
    lines = matrix.content.decode().splitlines()
    assert lines[0].startswith("backend_a,backend_b,files_a,files_b,files_both,")
    assert len(lines) == 1 + 4 * 3  # every ordered pair
    assert "cpu,neuron,3,3,3,0,1.000,11,8,8,3,0.727,4" in lines

    tests = client.get(f"{P}/matrix/pair/tests.csv?a=neuron&b=cpu").content.decode().splitlines()
    assert tests == [
        "test,file,passes_on,not_on,outcome_there,reason_there",
        f"{tid(C, 3)},{C},neuron,cpu,skipped,{CUDA}",
        f"{tid(B, 1)},{B},cpu,neuron,skipped,{NEURON}",
        f"{tid(B, 2)},{B},cpu,neuron,not run,",
        f"{tid(B, 3)},{B},cpu,neuron,not run,",
        f"{tid(B, 4)},{B},cpu,neuron,not run,",
    ]
    files = client.get(f"{P}/matrix/pair/files.csv?a=cpu&b=neuron").content.decode()
    assert files.splitlines() == ["file,runs_on,not_on"]


# --- Tracking issues' titles and states (the tracker sync, against the fake GitHub) ---------


def test_pages_name_issues_with_their_titles_and_flag_gaps_tracked_only_by_closed_ones(
    client, runs, exemptions, fake_tracker, settings
):
    from parity.services.issue_sync import issues_sync
    from tests.fake_tracker import github_issue

    settings.PARITY_TRACKER_SYNC_SECONDS = settings.PARITY_TRACKER_SYNC_TICK_SECONDS
    for number, title, state in [
        (4242, "TPU lacks aten::nonzero", "closed"),
        (501, "test_a4 loses the device", "closed"),
        (502, "No neuron kernel for test_b", "open"),
        (503, "test_a2 is flaky on gpu", "open"),
        (504, "test_c disabled", "closed"),  # the expired exemption's
    ]:
        fake_tracker.add_github("pytorch/xla", github_issue(number, title, state=state))
    issues_sync()
    a2 = Gap.objects.get(backend__name="tpu", test__key=tid(A, 2))

    closed_label = "pytorch/xla#4242 TPU lacks aten::nonzero (closed)"
    test_page = text(client.get(f"{P}/tests/{a2.test_id}/"))
    assert closed_label in test_page and "tracked · issue closed" in test_page
    assert closed_label in text(client.get(f"{P}/file/?path={A}&backend=tpu"))
    gaps = text(client.get(f"{P}/gaps/?open=1&tracked=closed"))
    flagged = [cells(row)[1] for row in rows(gaps, "new-gaps")]
    assert sorted(re.findall(r"test_a\d", " ".join(flagged))) == ["test_a2", "test_a4"]
    heatmap = text(client.get(f"{P}/"))
    assert "2 by closed issues" in heatmap
    exempted = text(client.get(f"{P}/exemptions/?issue=closed"))
    names = {t.pk: name for name, t in exemptions.items()}
    assert [names[pk] for pk in exemption_rows(exempted)] == ["expired", "test"]
    assert "pytorch/xla#501 test_a4 loses the device (closed)" in exempted
    assert "issue closed</span>" in exempted


# --- HEAD and the favicon ---------------------------------------------------------------------


def test_json_and_csv_endpoints_answer_head(client, runs):
    for url in (
        "/overview.json",
        f"{P}/skip-reasons.json",
        f"{P}/matrix.csv",
        f"{P}/matrix/pair/files.csv?a=cpu&b=tpu",
        f"{P}/matrix/pair/tests.csv?a=cpu&b=tpu",
        f"{P}/digest/",
    ):
        response = client.head(url)
        assert response.status_code == 200, url
        assert response.content == b""


def test_favicon_ico_leads_to_the_sites_icon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"].endswith("parity/favicon.svg")


def test_a_file_a_backend_never_ran_is_one_row_there(client, runs, upload_run):
    html = text(client.get(f"{P}/file/?path={B}&backend=neuron"))
    assert "missing on neuron" not in html  # b1 ran there (skipped)
    # A later neuron run without test_b.py at all, as on day 1.
    day1 = runs_by_day()[DAY1]["neuron"]
    upload_run("neuron", day1, day=DAY2, run="neuron-3", commit="e" * 40, time="18:00")
    html = text(client.get(f"{P}/file/?path={B}&backend=neuron"))
    grid = rows(html, "file-grid")
    assert len(grid) == 1 and "missing on neuron: 4 tests" in grid[0]
    assert "none is in its current run" in grid[0]
    every = text(client.get(f"{P}/file/?path={B}"))
    # One row for neuron, then each test with the other backends' outcomes: no neuron column.
    folded, *tests = rows(every, "file-grid")
    assert "missing on neuron: 4 tests" in folded and "No column of its own" in folded
    assert len(tests) == 4 and not any('data-backend="neuron"' in row for row in tests)
    head = every.split('id="file-grid"', 1)[1].split("</thead>", 1)[0]
    assert "neuron" not in head and "tpu" in head


def test_a_files_tests_come_a_page_at_a_time(client, upload_run, xla):
    many = {f"test/test_many.py::TestM::test_{n:03}": "passed" for n in range(130)}
    upload_run("cpu", many, day=DAY2)
    first = text(client.get(f"{P}/file/?path=test/test_many.py"))
    assert len(rows(first, "file-grid")) == 100
    assert "tests 1–100 of 130" in first
    second = text(client.get(f"{P}/file/?path=test/test_many.py&page=2"))
    assert len(rows(second, "file-grid")) == 30 and "TestM::test_129" in second


def test_the_files_ci_runs_come_a_page_at_a_time_and_the_missing_alone(
    client, runs, exemptions, monkeypatch
):
    """A backend's files CI runs, thousands in a large project, are paged; "only the missing"
    lists the files its current run lacks, paged the same."""
    url = f"{P}/exemptions/?files=gpu"
    everything = backend_files(text(client.get(url)))[1]
    monkeypatch.setattr(views, "EXEMPTION_FILES_SHOWN", 2)
    first = text(client.get(url))
    assert backend_files(first)[1] == everything[:2]
    assert "files 1–2 of 3" in first and 'href="?files=gpu&files_page=2#backend-files"' in first
    second = text(client.get(url + "&files_page=2"))
    assert backend_files(second)[1] == everything[2:] and 'start="3"' in second
    # The heading still counts every file.
    assert backend_files(second)[0].endswith("gpu 3")


def test_the_files_list_keeps_only_the_missing_when_asked(client, runs, exemptions, upload_run):
    # A later gpu run without test_c.py: CI is told to run it there, the run lacks it.
    upload_run("gpu", {tid(A, 1): "passed"}, day=DAY2, run="gpu-3", time="20:00")
    url = f"{P}/exemptions/?files=gpu"
    html = text(client.get(url))
    missing = re.findall(r'<li class="not-run"><a [^>]*>([^<]+)</a>', html)
    assert missing == [B, C] and backend_files(html)[1] == [A]
    assert 'href="?files=gpu&missing=1#backend-files">Only the 2 missing</a>' in html
    only = text(client.get(url + "&missing=1"))
    section = only.split('id="files-list"')[1].split("</ol>")[0]
    assert re.findall(r"<a [^>]*>([^<]+)</a>", section) == missing
    assert '<input type="hidden" name="missing" value="1">' in only
