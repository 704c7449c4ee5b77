"""Compare views' pages, CSV and API over a small seeded history (``compare_scenario``): the
report lists its red tests first, each with its sentence, filters by state and links each test;
the list is one click from every project page; a maintainer previews settings (nothing written)
before saving them; a reader cannot write; the CSV and the API say what the page says."""

import csv
import datetime
import io
import re
from html import unescape

import pytest
from django.test import Client
from django.utils import timezone

from parity.models import Backend, CompareRow, CompareView
from parity.pure.compare import CompareState
from parity.result_reads import compare_report
from parity.services.compare_views import CompareRequest, compare_view_create
from tests.parity.compare_scenario import SMALL_STATES, T, compare_upload, small_history
from tests.parity.dashboard.conftest import member

pytestmark = pytest.mark.django_db
P = "/p/pytorch-xla"


@pytest.fixture
def seeded(xla, ingest, eager_errors_propagate):
    """The view as a maintainer saves it: the save computes it."""
    compare_upload(ingest, small_history())
    return compare_view_create(
        project=xla,
        request=CompareRequest(
            name="tpu-vs-cpu",
            sample=Backend.objects.get(project=xla, name="tpu"),
            basis=Backend.objects.get(project=xla, name="cpu"),
        ),
    )


def plain(response) -> str:
    assert response.status_code == 200, response.status_code
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", response.content.decode())))


def _rows(html: str) -> list[tuple[str, str]]:
    """(test id, state) of the report's table, in order."""
    return re.findall(r'<tr data-test="(\d+)" data-state="(\w+)">', html)


def test_the_report_lists_red_first_with_sentences_and_filters(xla, seeded, maintainer):
    report = compare_report(view=seeded)
    page = Client().get(f"{P}/compare/tpu-vs-cpu/")
    html, body = page.content.decode(), plain(page)

    assert _rows(html) == [(str(r.test_id), r.state.value) for r in report.rows]
    assert {r.test: r.state.value for r in report.rows} == {
        T.format(n): s for n, s in SMALL_STATES.items()
    }
    assert _rows(html)[0][1] == "extreme"
    extreme = next(r for r in report.rows if r.state.value == "extreme")
    assert extreme.sentence in body and "Fisher p" in extreme.sentence
    assert f'href="{P}/tests/{extreme.test_id}/"' in html
    assert "13 of tpu, 13 of cpu" in body
    assert "{%" not in body and "{{" not in body
    assert "Settings" not in body  # a reader's page: no settings link

    only = Client().get(f"{P}/compare/tpu-vs-cpu/?state=improved").content.decode()
    assert [s for _, s in _rows(only)] == ["improved"]
    assert (
        f'href="{P}/compare/tpu-vs-cpu/settings/"'
        in maintainer.get(f"{P}/compare/tpu-vs-cpu/").content.decode()
    )
    assert Client().get(f"{P}/compare/nope/").status_code == 404


def test_the_list_is_reachable_from_the_project_nav(seeded):
    heatmap = Client().get(f"{P}/").content.decode()
    assert f'href="{P}/compare/"' in heatmap
    page = Client().get(f"{P}/compare/")
    assert 'href="/p/pytorch-xla/compare/tpu-vs-cpu/"' in page.content.decode()
    assert "New compare view" not in plain(page)  # a reader gets no form


def _settings(**change) -> dict:
    data = {
        "name": "tpu-vs-cpu", "sample": "tpu", "basis": "cpu", "days": 14, "confidence": 95,
        "tolerance": 5, "min_failures": 3, "action": "preview",
    }  # fmt: skip
    return {**data, **change}


def test_settings_preview_what_would_change_and_write_only_on_save(xla, seeded, maintainer):
    url = f"{P}/compare/tpu-vs-cpu/settings/"
    # Ninety points of tolerance: the extreme test is tolerated, so no longer red.
    page = maintainer.post(url, _settings(tolerance=90))
    body = plain(page)
    assert "Preview: 1 test would change state" in body, body
    rows = re.findall(r'<tr data-test="(\d+)">', page.content.decode())
    extreme = next(r for r in compare_report(view=seeded).rows if r.state.value == "extreme")
    assert rows == [str(extreme.test_id)]
    seeded.refresh_from_db()
    assert seeded.tolerance == 5.0  # a preview writes nothing

    saved = maintainer.post(url, _settings(tolerance=90, action="save"))
    assert saved.status_code == 302
    seeded.refresh_from_db()
    assert seeded.tolerance == 90.0

    refused = maintainer.post(url, _settings(basis="tpu", action="save"))
    assert "another variant than the sample" in plain(refused)
    assert member(xla, "viewer").post(url, _settings(action="save")).status_code == 403


def test_a_maintainer_creates_and_removes_a_view(xla, seeded, maintainer):
    new = _settings(name="neuron-vs-cpu", sample="neuron")
    preview = plain(maintainer.post(f"{P}/compare/", new))
    assert "Preview:" in preview and not CompareView.objects.filter(name="neuron-vs-cpu").exists()
    created = maintainer.post(f"{P}/compare/", {**new, "action": "save"})
    assert created.status_code == 302 and created["Location"] == f"{P}/compare/neuron-vs-cpu/"
    assert maintainer.post(f"{P}/compare/", {**new, "action": "save"}).status_code == 200  # taken

    assert Client().post(f"{P}/compare/", {**new, "name": "x", "action": "save"}).status_code in (
        302,
        403,
    )
    assert not CompareView.objects.filter(name="x").exists()
    removed = maintainer.post(f"{P}/compare/neuron-vs-cpu/delete/")
    assert removed.status_code == 302
    assert not CompareView.objects.filter(name="neuron-vs-cpu").exists()


def test_the_csv_and_the_api_say_what_the_page_says(xla, seeded, api):
    report = compare_report(view=seeded)
    download = Client().get(f"{P}/compare/tpu-vs-cpu.csv")
    assert download["Content-Type"].startswith("text/csv")
    lines = list(csv.DictReader(io.StringIO(download.content.decode())))
    assert [(d["test"], d["state"], d["sentence"]) for d in lines] == [
        (r.test, r.state.value, r.sentence) for r in report.rows
    ]

    listed = api.get("/api/v1/projects/pytorch-xla/compare/").json()
    assert [(v["name"], v["sample"], v["basis"], v["days"]) for v in listed] == [
        ("tpu-vs-cpu", "tpu", "cpu", 14)
    ]
    body = api.get("/api/v1/projects/pytorch-xla/compare/tpu-vs-cpu/").json()
    assert [(t["test"], t["state"], t["sentence"]) for t in body["tests"]] == [
        (r.test, r.state.value, r.sentence) for r in report.rows
    ]
    assert body["counts"]["extreme"] == 1 and (body["sample_runs"], body["basis_runs"]) == (13, 13)
    extreme = next(t for t in body["tests"] if t["state"] == "extreme")
    assert extreme["sample"]["failed"] == 8 and extreme["p"] < 0.05
    only = api.get("/api/v1/projects/pytorch-xla/compare/tpu-vs-cpu/", {"state": "improved"})
    assert [t["state"] for t in only.json()["tests"]] == ["improved"]
    assert (
        api.get("/api/v1/projects/pytorch-xla/compare/tpu-vs-cpu/", {"state": "x"}).status_code
        == 400
    )
    assert api.get("/api/v1/projects/pytorch-xla/compare/nope/").status_code == 404


def test_the_page_reads_the_kept_rows_and_says_when_they_were_computed(xla, seeded):
    # A kept row changed under the page: the page says what is kept, not a count of results.
    steady = CompareRow.objects.get(view=seeded, test__key=T.format("steady"))
    CompareRow.objects.filter(pk=steady.pk).update(state="regressed")
    page = Client().get(f"{P}/compare/tpu-vs-cpu/")
    assert (str(steady.test_id), "regressed") in _rows(page.content.decode())
    computed = timezone.localtime(seeded.computed_at, datetime.UTC).strftime("%Y-%m-%d %H:%M")
    assert f"Computed {computed} UTC" in plain(page)
    assert Client().get(f"{P}/compare/tpu-vs-cpu.csv").content.decode().count(",regressed,") == 1

    # A view never computed says so, and lists nothing.
    never = CompareView.objects.create(
        project=xla, name="never", sample=seeded.sample, basis=seeded.basis
    )
    body = plain(Client().get(f"{P}/compare/{never.name}/"))
    assert "Not computed yet" in body and "Computed " not in body


def test_the_api_pages_the_rows_with_complete_counts(seeded, api):
    url = "/api/v1/projects/pytorch-xla/compare/tpu-vs-cpu/"
    whole = [(r.test, r.state.value) for r in compare_report(view=seeded).rows]
    got, params, pages = [], {"limit": 1}, 0
    while url:
        body = api.get(url, params).json()
        assert body["count"] == len(whole) and sum(body["counts"].values()) == len(whole)
        assert body["computed_at"] is not None and len(body["tests"]) == 1
        got += [(t["test"], t["state"]) for t in body["tests"]]
        url, params, pages = body["next"], {}, pages + 1
    assert got == whole and pages == len(whole)
    second = api.get("/api/v1/projects/pytorch-xla/compare/tpu-vs-cpu/", {"limit": 1, "offset": 1})
    assert second.json()["previous"].endswith("/compare/tpu-vs-cpu/?limit=1")
    one = api.get(
        "/api/v1/projects/pytorch-xla/compare/tpu-vs-cpu/", {"state": "improved", "limit": 5}
    ).json()
    assert [t["state"] for t in one["tests"]] == ["improved"] and one["count"] == 1
    assert one["next"] is None and one["counts"]["extreme"] == 1
    too_many = api.get("/api/v1/projects/pytorch-xla/compare/tpu-vs-cpu/", {"limit": 5001})
    assert too_many.status_code == 400


def test_the_test_page_and_api_carry_its_state_in_each_view(xla, seeded, api):
    report = compare_report(view=seeded)
    for row in report.rows:
        page = Client().get(f"{P}/tests/{row.test_id}/")
        section = re.search(
            r'<section class="card" id="test-compare">.*?</section>', page.content.decode(), re.S
        )
        assert section, row.test
        assert f'data-view="tpu-vs-cpu" data-state="{row.state.value}"' in section.group(0)
        assert row.sentence in unescape(section.group(0))
        body = api.get(f"/api/v1/projects/pytorch-xla/tests/{row.test_id}/").json()
        assert [(c["view"], c["state"], c["sentence"]) for c in body["compare"]] == [
            ("tpu-vs-cpu", row.state.value, row.sentence)
        ]


def test_a_maintainer_reads_the_overview_headline_from_a_view(xla, seeded, maintainer):
    assert "compare-headline" not in Client().get("/").content.decode()  # the default
    url = f"{P}/compare/tpu-vs-cpu/settings/"
    assert (
        member(xla, "viewer").post(url, {"action": "headline", "headline": "1"}).status_code == 403
    )
    assert maintainer.post(url, {"action": "headline", "headline": "1"}).status_code == 302
    xla.refresh_from_db()
    assert xla.headline_compare_view_id == seeded.pk

    counts = compare_report(view=seeded).counts
    red = counts[CompareState.EXTREME] + counts[CompareState.REGRESSED]
    overview = Client().get("/")
    headline = re.search(r'<p class="compare-headline".*?</p>', overview.content.decode(), re.S)
    text = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", headline.group(0)))).strip()
    assert text.startswith(
        f"tpu vs cpu over 14 days: {red} regressed ({counts[CompareState.EXTREME]} extreme), "
        f"{counts[CompareState.NO_DIFFERENCE]} no significant difference"
    ), text
    assert "Read from the compare view tpu-vs-cpu" in text
    assert f'href="{P}/compare/tpu-vs-cpu/"' in headline.group(0)

    maintainer.post(url, {"action": "headline", "headline": "0"})
    xla.refresh_from_db()
    assert xla.headline_compare_view_id is None
    assert "compare-headline" not in Client().get("/").content.decode()
