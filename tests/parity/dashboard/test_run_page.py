"""A run's page (``/p/<slug>/runs/<id>/``) and the runs list's links to it and coverage flags,
through Django's test client."""

import re

import pytest

from parity.models import TestCase
from tests.parity.conftest import run_xml
from tests.parity.dashboard.conftest import text
from tests.parity.dashboard.test_views import cells, rows

P = "/p/pytorch-xla"
F, G = "test/test_f.py", "test/test_g.py"
DAY1, DAY2, DAY3 = "2026-04-01", "2026-04-02", "2026-04-03"


def words(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


def cases(file: str, count: int) -> dict:
    return {f"{file}::TestF::test_{n}": "passed" for n in range(count)}


@pytest.fixture
def history(upload_run) -> dict[str, int]:
    """tpu runs 12 tests in two shards on day 1, only the first shard on day 2 (coverage drops),
    both again on day 3; a pull request's run on day 3 skips one test and fixes none."""
    upload_run("cpu", {**cases(F, 10), **cases(G, 2)}, day=DAY1)
    runs = {}
    for day in (DAY1, DAY3):
        upload_run("tpu", cases(F, 10), day=day, name="shard1.xml", complete=False)
        runs[day] = upload_run("tpu", cases(G, 2), day=day, name="shard2.xml")
    runs[DAY2] = upload_run("tpu", cases(F, 10), day=DAY2, name="shard1.xml")
    skipped = {f"{F}::TestF::test_3": ("skipped", "needs 8 devices")}
    runs["pr"] = upload_run(
        "tpu", {**cases(F, 10), **skipped, **cases(G, 2)}, day=DAY3, branch="feature", run="pr"
    )
    return runs


def test_the_runs_list_flags_every_run_that_dropped_coverage_and_links_its_page(client, history):
    table = rows(text(client.get(f"{P}/runs/?backend=tpu")), "runs-table")
    flagged = {run for run in history.values() if f'data-run="{run}"' in "".join(
        row for row in table if "coverage dropped" in row
    )}  # fmt: skip
    assert flagged == {history[DAY2]}  # not the current run (day 3)
    dropped = cells(next(r for r in table if f'data-run="{history[DAY2]}"' in r))
    assert "10 tests, 12 in the run before" in dropped[3]
    for run in history.values():
        assert f'href="{P}/runs/{run}/"' in "".join(table)


def test_a_pull_requests_run_page_shows_the_gaps_it_would_open(client, history):
    html = text(client.get(f"{P}/runs/{history['pr']}/"))
    opened = rows(html, "opened-gaps")
    assert [cells(row)[:3] for row in opened] == [
        [f"{F}::TestF::test_3", "skipped", "needs 8 devices"]
    ]
    test = TestCase.objects.get(key=f"{F}::TestF::test_3")
    assert f'href="{P}/tests/{test.pk}/"' in opened[0]
    assert "Opened 1 untracked, 0 tracked and 0 intended gap; closed 0." in words(html)
    assert "Not the current run of tpu (a run of feature, not of master): the gaps below" in html


def test_a_run_missing_a_shard_says_which_files_and_how_many_tests(client, history):
    html = text(client.get(f"{P}/runs/{history[DAY2]}/"))
    assert "shard2.xml: 1 file, 2 tests not in this run" in words(html)
    assert f"{G} 2 tests" in words(html)
    assert "coverage dropped" in html
    assert [cells(row)[1] for row in rows(html, "opened-gaps")] == ["missing", "missing"]
    assert "12 tests, against 10 in" in words(text(client.get(f"{P}/runs/{history[DAY3]}/")))


def test_a_past_runs_page_says_the_gaps_it_opened_not_would_open(client, history):
    html = words(text(client.get(f"{P}/runs/{history[DAY2]}/")))
    prose = " ".join(html.split())
    assert "A past run of tpu: the gaps below are the ones it opened against the run before it" in (
        prose
    )
    assert "would open" not in prose
    assert "would open" in words(text(client.get(f"{P}/runs/{history['pr']}/")))


def test_a_run_of_another_project_or_none_is_404(client, history):
    assert client.get(f"{P}/runs/999999/").status_code == 404


def test_a_probe_runs_page_says_it_is_never_a_gate_and_names_its_exemption_list(
    client, history, ingest, api
):
    resolved = api.post(
        "/api/v1/projects/pytorch-xla/manifest/resolve/",
        {"backend": "tpu", "tests": list(cases(F, 10))},
        format="json",
    ).json()
    failing = {f"{F}::TestF::test_0": ("failed", "boom")}
    probe = ingest(
        ("tpu.xml", run_xml({**cases(F, 10), **failing, **cases(G, 2)})),
        backend="tpu",
        commit="c" * 40,
        run="probe",
        complete="true",
        timestamp=f"{DAY3}T13:00:00Z",
        probe="true",
        exemptions_version=resolved["version"],
    ).json()["run"]
    html = text(client.get(f"{P}/runs/{probe}/"))
    assert 'data-ok="true"' in html  # it opens an untracked gap, and is never a gate
    assert [cells(row)[:2] for row in rows(html, "opened-gaps")] == [
        [f"{F}::TestF::test_0", "failed"]
    ]
    assert "A probe run: the exempted tests ran too" in words(html)
    assert "Not the current run" not in html
    listed = f"Exemption list: version {resolved['version']} applied, unchanged since."
    assert listed in " ".join(words(html).split())
    # A run that sent no version (the history's, made without the plugin) says nothing of it.
    assert "Exemption list" not in text(client.get(f"{P}/runs/{history['pr']}/"))


def test_a_run_page_says_each_exemption_once_not_each_gap_it_covers(client, upload_run, xla):
    """tpu is exempted from test_g.py by design: the run page reads one line for the file, with
    how many gaps it covers and why, not a row per test."""
    from parity.services.triage import TriageRequest, triage_create

    upload_run("cpu", {**cases(F, 2), **cases(G, 30)}, day=DAY1)
    request = TriageRequest(kind="intended", match=G, backend="tpu", note="no g on tpu")
    triage_create(project=xla, request=request)
    run = upload_run("tpu", cases(F, 2), day=DAY1)

    html = client.get(f"{P}/runs/{run}/").content.decode()

    listed = " ".join(words(html.split('id="exempted"', 1)[1].split("</ul>", 1)[0]).split())
    assert listed.count("intended") == 1
    assert f"{G}: 30 gaps · no g on tpu" in listed
    assert html.count("TestF::test_") < 30  # the covered tests are not listed one by one
