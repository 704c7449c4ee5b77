"""Run health apart from test health: a file whose report holds far fewer tests than in the
backend's last complete run reads ``truncated`` (the project's ``truncation_percent``, 5 by
default), and the verdict keeps files that crashed or were cut short out of ``ok``, calling the
run ``unhealthy`` and naming each file and shard to rerun (docs/run-health.md)."""

import json

import pytest
from django.db import connection
from psycopg2 import sql

from parity.clients import parity_ci
from parity.definitions import ABSENT, INFRA, INFRA_STATES, file_truncated, is_infra
from parity.models import ABSENT_STATES, Gap, GapState, Project, RunFile, RunFileState
from tests.parity.conftest import commit_of, run_xml
from tests.parity.dashboard.conftest import text
from tests.parity.dashboard.test_views import rows

T = "test/t.py::TestT::test_{}"
U = "test/u.py::TestU::test_{}"
DAYS = ("2026-04-01", "2026-04-02", "2026-04-03")
XLA = "pytorch-xla"


def test_more_than_the_percent_fewer_is_truncated_and_no_fewer_is_not():
    assert file_truncated(previous=100, current=94, percent=5)  # 6 % fewer
    assert not file_truncated(previous=100, current=95, percent=5)  # 5 %: not more than 5
    assert not file_truncated(previous=100, current=96, percent=5)  # 4 %
    assert file_truncated(previous=100, current=95, percent=4)  # the project's setting
    assert not file_truncated(previous=100, current=96, percent=4)
    # Nothing to compare with, or a count the report did not give: not truncated.
    assert not file_truncated(previous=None, current=1, percent=5)
    assert not file_truncated(previous=0, current=0, percent=5)
    assert not file_truncated(previous=100, current=None, percent=5)


@pytest.mark.django_db
def test_the_infrastructure_states_are_absent_states_and_the_sql_says_the_same():
    assert set(INFRA_STATES) < set(ABSENT_STATES)
    assert GapState.MISSING not in INFRA_STATES  # never told to run it: the backend's gap
    # Every run manifest state but "ran" is infrastructure's: the engine copies them into gaps.
    assert {s.value for s in RunFileState} - {"ran"} == {s.value for s in INFRA_STATES}
    with connection.cursor() as cursor:
        for state in GapState:
            cursor.execute(
                sql.SQL("SELECT %s IN {}, %s IN {}").format(INFRA, ABSENT), [state, state]
            )
            assert cursor.fetchone() == (is_infra(state), state in ABSENT_STATES), state


def cases_of(template: str, n: int) -> dict[str, str]:
    return {template.format(i): "passed" for i in range(n)}


@pytest.fixture
def send(xla, ingest, api, django_capture_on_commit_callbacks, eager_errors_propagate):
    """Upload one complete run of ``backend`` on day ``day`` (0, 1, 2) with its run manifest:
    each file of ``results`` ran, exited 0 and wrote a report of its tests (``counts`` overrides
    a file's count), and ``crashed`` files died by SIGSEGV."""

    def _send(
        backend, day, results, *, shard="", crashed=(), counts=None, failing=(), branch="master"
    ):
        cases = {**results, **{k: ("failed", "boom") for k in failing}}
        files: dict[str, int] = {}
        for key in cases:
            files[key.split("::")[0]] = files.get(key.split("::")[0], 0) + 1
        files.update(counts or {})
        entries = [
            {"file": f, "exit_code": 0, "report": True, "tests": n} for f, n in files.items()
        ]
        entries += [{"file": f, "signal": "SIGSEGV"} for f in crashed]
        response = ingest(
            ("r.xml", run_xml(cases)),
            backend=backend,
            commit=commit_of(DAYS[day]),
            branch=branch,
            run=f"{backend}-{day}",
            complete="true",
            timestamp=f"{DAYS[day]}T12:00:00Z",
            run_manifest=json.dumps({"files": entries}),
            shard=shard,
        )
        assert response.status_code == 202, response.content
        run = response.json()["run"]
        if shard:  # a shard I/N completes its run with the others: this job is the last
            with django_capture_on_commit_callbacks(execute=True):
                assert api.post(f"/api/v1/runs/{run}/complete/").status_code == 200
        return run

    return _send


def verdict(api, run: int) -> dict:
    response = api.get(f"/api/v1/runs/{run}/verdict/")
    assert response.status_code == 200, response.content
    return response.json()


@pytest.fixture
def baseline(send):
    """The reference and tpu ran test/t.py's 100 tests and test/u.py's 2."""
    every = {**cases_of(T, 100), **cases_of(U, 2)}
    send("cpu", 0, every)
    return send("tpu", 0, every)


def test_a_file_with_six_percent_fewer_tests_reads_truncated_and_its_tests_too(baseline, send, api):
    run = send("tpu", 1, {**cases_of(T, 94), **cases_of(U, 2)}, shard="2/4")

    row = RunFile.objects.get(run_id=run, file="test/t.py")
    assert (row.state, row.tests, row.baseline_tests) == ("truncated", 94, 100)
    assert RunFile.objects.get(run_id=run, file="test/u.py").state == "ran"
    gaps = Gap.objects.filter(backend__name="tpu", is_open=True)
    assert sorted(gaps.values_list("test__key", "state")) == [
        (T.format(i), "truncated") for i in range(94, 100)
    ]

    body = verdict(api, run)
    # Test health: nothing the backend did wrong. Run health: rerun test/t.py, shard 2/4.
    assert (body["ok"], body["health"], body["coverage_drop"]) == (True, "unhealthy", False)
    assert body["opened"] == {
        "tracked": 0, "untracked": 0, "intended": 0, "tracked_closed": 0, "infra": 6,
        "uncovered": 0,
        "flaky": 0,
    }  # fmt: skip
    assert body["rerun"]["files"] == [
        {
            "file": "test/t.py",
            "state": "truncated",
            "exit_status": "exit 0",
            "shard": "2/4",
            "upload": row.upload_id,
            "tests": 94,
            "baseline_tests": 100,
        }
    ]
    assert body["rerun"]["shards"] == [
        {"shard": "2/4", "upload": row.upload_id, "files": 1, "failed_upload": False, "error": ""}
    ]
    assert {g["infra"] for g in body["gaps"]} == {True}


@pytest.mark.parametrize(
    ("percent", "state", "gaps", "health"),
    [(5, "ran", "missing", "healthy"), (4, "truncated", "truncated", "unhealthy")],
)
def test_five_percent_fewer_is_truncated_only_under_a_lower_setting(
    xla, send, api, percent, state, gaps, health
):
    Project.objects.filter(pk=xla.pk).update(truncation_percent=percent)
    every = {**cases_of(T, 100), **cases_of(U, 2)}
    send("cpu", 0, every)
    send("tpu", 0, every)

    run = send("tpu", 1, {**cases_of(T, 95), **cases_of(U, 2)})
    assert RunFile.objects.get(run_id=run, file="test/t.py").state == state
    states = Gap.objects.filter(backend__name="tpu", is_open=True).values_list("state", flat=True)
    assert list(states) == [gaps] * 5
    assert verdict(api, run)["health"] == health


def test_a_drop_seen_twice_is_the_backends_own(baseline, send):
    """The next run compares with the last complete run, whose file was truncated: not a file
    that ran normally, so nothing to compare with; the tests it still lacks are missing."""
    send("tpu", 1, {**cases_of(T, 90), **cases_of(U, 2)})
    run = send("tpu", 2, {**cases_of(T, 90), **cases_of(U, 2)})
    assert RunFile.objects.get(run_id=run, file="test/t.py").state == "ran"
    states = Gap.objects.filter(backend__name="tpu", is_open=True).values_list("state", flat=True)
    assert set(states) == {"missing"}


def test_a_rerun_of_the_file_in_the_same_run_clears_it(baseline, send, api, ingest):
    run = send("tpu", 1, {**cases_of(T, 50), **cases_of(U, 2)}, shard="1/2")
    assert verdict(api, run)["health"] == "unhealthy"

    rerun = {T.format(i): "passed" for i in range(50, 100)}
    entry = {"file": "test/t.py", "exit_code": 0, "report": True, "tests": 100}
    ingest(
        ("rerun.xml", run_xml(rerun)),
        backend="tpu",
        commit=commit_of(DAYS[1]),
        branch="master",
        run="tpu-1",
        timestamp=f"{DAYS[1]}T12:00:00Z",
        run_manifest=json.dumps({"files": [entry]}),
        shard="1/2",
    )
    body = verdict(api, run)
    assert (body["ok"], body["health"], body["rerun"]) == (
        True,
        "healthy",
        {"files": [], "shards": []},
    )
    assert not Gap.objects.filter(backend__name="tpu", is_open=True).exists()


def test_a_crash_is_run_health_and_a_failure_beside_it_still_fails_the_tests(baseline, send, api):
    crashed = send("tpu", 1, cases_of(T, 100), crashed=["test/u.py"], shard="3/4")
    body = verdict(api, crashed)
    assert (body["ok"], body["health"]) == (True, "unhealthy")
    [file] = body["rerun"]["files"]
    assert (file["file"], file["state"], file["exit_status"], file["shard"]) == (
        "test/u.py",
        "crashed",
        "SIGSEGV",
        "3/4",
    )
    assert body["opened"]["infra"] == 2 and body["opened"]["untracked"] == 0
    # What CI prints: the rerun list, and exit 7 (only infrastructure failed).
    assert "test/u.py  crashed  shard 3/4  SIGSEGV" in parity_ci.verdict_rerun(body)

    failing = send(
        "tpu", 2, cases_of(T, 99), failing=[T.format(99)], crashed=["test/u.py"], shard="3/4"
    )
    body = verdict(api, failing)
    assert (body["ok"], body["health"]) == (False, "unhealthy")
    assert body["opened"]["untracked"] == 1
    assert [g["test"] for g in body["gaps"] if not g["infra"]] == [T.format(99)]


def test_an_upload_that_failed_to_ingest_is_named_with_its_error(
    baseline, send, api, ingest, client
):
    run = send("tpu", 1, {**cases_of(T, 100), **cases_of(U, 2)}, shard="1/2")
    entry = {"file": "test/v.py", "exit_code": 0, "report": True, "tests": 4}
    broken = ingest(
        ("cut.xml", b"<testsuite><testcase"),  # a job killed while writing its report
        backend="tpu",
        commit=commit_of(DAYS[1]),
        branch="master",
        run="tpu-1",
        timestamp=f"{DAYS[1]}T12:00:00Z",
        run_manifest=json.dumps({"files": [entry]}),
        shard="2/2",
    ).json()

    body = verdict(api, run)
    assert (body["ok"], body["health"], body["rerun"]["files"]) == (True, "unhealthy", [])
    [shard] = body["rerun"]["shards"]
    assert (shard["shard"], shard["upload"], shard["files"], shard["failed_upload"]) == (
        "2/2",
        broken["id"],
        1,
        True,
    )
    assert "cut.xml" in shard["error"]
    assert "failed to ingest: send it again or rerun the job" in parity_ci.verdict_rerun(body)

    page = client.get(f"/p/{XLA}/runs/{run}/")
    assert page.status_code == 200
    text = page.content.decode()
    assert 'data-healthy="false"' in text and f'data-failed-upload="{broken["id"]}"' in text


V = "test/v.py::TestV::test_{}"


def coverage_drop_everywhere(api, client, run: int) -> dict[str, bool]:
    """Whether a coverage drop shows for ``run`` in the CI verdict, the runs list and, while it
    is tpu's current run, the parity API (what the overview's badge and the webhook read)."""
    table = rows(text(client.get(f"/p/{XLA}/runs/?backend=tpu")), "runs-table")
    [row] = [row for row in table if f'data-run="{run}"' in row]
    parity = api.get(f"/api/v1/projects/{XLA}/parity/?files=0").json()
    [tpu] = [b for b in parity["backends"] if b["backend"] == "tpu"]
    assert tpu["run"] == run
    return {
        "verdict": verdict(api, run)["coverage_drop"],
        "runs list": "coverage dropped" in row,
        "parity": tpu["coverage_drop"],
    }


def test_a_crashed_shard_is_a_rerun_everywhere_and_tests_gone_from_files_that_ran_a_drop(
    send, api, client
):
    every = {**cases_of(T, 100), **cases_of(V, 20)}
    send("cpu", 0, every)
    send("tpu", 0, every)

    # test/v.py crashed: 100 tests of 120, all it lacks infrastructure's.
    crashed = send("tpu", 1, cases_of(T, 100), crashed=["test/v.py"], shard="2/2")
    nothing = {"verdict": False, "runs list": False, "parity": False}
    assert coverage_drop_everywhere(api, client, crashed) == nothing

    # test/t.py ran and reported 80 tests (not truncated at 50 %): 20 of its 100 are gone, a
    # drop whatever test/v.py did again.
    Project.objects.filter(slug=XLA).update(truncation_percent=50)
    dropped = send("tpu", 2, cases_of(T, 80), crashed=["test/v.py"], shard="2/2")
    assert coverage_drop_everywhere(api, client, dropped) == dict.fromkeys(nothing, True)


def test_a_pull_requests_run_whose_shard_crashed_is_no_drop_in_the_runs_list(send, api, client):
    every = {**cases_of(T, 100), **cases_of(V, 20)}
    send("cpu", 0, every)
    send("tpu", 0, every)
    # Never current, so the engine never judged it: the runs list has its uploads' counts.
    crashed = send("tpu", 1, cases_of(T, 100), crashed=["test/v.py"], branch="feature")
    table = rows(text(client.get(f"/p/{XLA}/runs/?backend=tpu")), "runs-table")
    [row] = [row for row in table if f'data-run="{crashed}"' in row]
    assert ("coverage dropped" in row, verdict(api, crashed)["coverage_drop"]) == (False, False)
