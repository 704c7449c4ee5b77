"""The CI verdict: ok unless a run opens an untracked gap or drops coverage."""

import json

import pytest
from rest_framework.test import APIClient

from parity.clients import parity_ci
from parity.models import Project, TestCase, TrackingIssue, Triage
from parity.services.projects import project_create, upload_token_create
from tests.parity.conftest import run_xml

A = "test/a.py::TestA::"
T1, T2, T3 = (f"{A}test_{n}" for n in range(1, 4))
BOTH_PASS = {T1: "passed", T2: "passed"}
DAY1, DAY2 = "2026-04-01", "2026-04-02"


@pytest.fixture
def history(upload_run):
    upload_run("cpu", BOTH_PASS, day=DAY1)
    return upload_run("tpu", BOTH_PASS, day=DAY1)


def verdict(api, run: int) -> dict:
    response = api.get(f"/api/v1/runs/{run}/verdict/")
    assert response.status_code == 200, response.content
    return response.json()


def test_an_untracked_skip_on_a_reference_passing_test_fails_the_verdict(history, upload_run, api):
    run = upload_run("tpu", {T1: "passed", T2: ("skipped", "not supported yet")}, day=DAY2)

    body = verdict(api, run)
    assert (body["run"], body["backend"], body["ok"]) == (run, "tpu", False)
    assert body["opened"] == {
        "tracked": 0,
        "untracked": 1,
        "intended": 0,
        "tracked_closed": 0,
        "infra": 0,
        "uncovered": 0,
        "flaky": 0,
    }
    assert body["closed"] == 0
    assert body["gaps"] == [
        {
            "test": T2,
            "test_id": TestCase.objects.get(key=T2).pk,
            "backend": "tpu",
            "state": "skipped",
            "reason": "not supported yet",
            "issues": [],
            "triage": None,
            "tracked": False,
            "intended": False,
            "tracked_closed": False,
            "exemption": None,
            "exemption_added": False,
            "infra": False,
        }
    ]


def test_the_same_skip_with_an_issue_url_in_its_reason_passes(history, upload_run, api):
    reason = "not supported yet, see https://github.com/pytorch/xla/issues/99"
    run = upload_run("tpu", {T1: "passed", T2: ("skipped", reason)}, day=DAY2)

    body = verdict(api, run)
    assert body["ok"] is True
    assert body["opened"] == {
        "tracked": 1,
        "untracked": 0,
        "intended": 0,
        "tracked_closed": 0,
        "infra": 0,
        "uncovered": 0,
        "flaky": 0,
    }
    assert body["gaps"][0]["issues"] == ["https://github.com/pytorch/xla/issues/99"]


def test_a_skip_whose_reason_is_triaged_intended_passes(history, upload_run, api):
    upload_run("gpu", {T1: "passed", T2: ("skipped", "by design")}, day=DAY1)
    reason_id = api.get("/api/v1/projects/pytorch-xla/gaps/").json()["results"][0]["reason_id"]
    triage = {"kind": "intended", "reason": reason_id, "note": "no such op on accelerators"}
    assert api.post("/api/v1/projects/pytorch-xla/triage/", triage).status_code == 201

    run = upload_run("tpu", {T1: "passed", T2: ("skipped", "by design")}, day=DAY2)

    body = verdict(api, run)
    opened = {
        "tracked": 0,
        "untracked": 0,
        "intended": 1,
        "tracked_closed": 0,
        "infra": 0,
        "uncovered": 0,
        "flaky": 0,
    }
    assert (body["ok"], body["opened"]) == (True, opened)
    assert body["gaps"][0]["triage"] == "intended"


def test_a_fix_is_counted_closed(upload_run, api):
    upload_run("cpu", BOTH_PASS, day=DAY1)
    upload_run("tpu", {T1: "passed", T2: ("failed", "boom")}, day=DAY1)

    body = verdict(api, upload_run("tpu", BOTH_PASS, day=DAY2))
    assert (body["ok"], body["closed"], body["gaps"]) == (True, 1, [])


def test_a_coverage_drop_fails_even_without_new_gaps(upload_run, api, settings):
    settings.PARITY_COVERAGE_DROP_PERCENT = 5
    tpu_only = {f"{A}tpu_{n}": "passed" for n in range(20)}  # not on the reference: no gaps
    upload_run("cpu", BOTH_PASS, day=DAY1)
    upload_run("tpu", {**BOTH_PASS, **tpu_only}, day=DAY1)

    body = verdict(api, upload_run("tpu", BOTH_PASS, day=DAY2))
    assert (body["ok"], body["coverage_drop"], body["opened"]["untracked"]) == (False, True, 0)
    assert (body["test_count"], body["baseline_test_count"]) == (2, 22)


def test_the_reference_backends_verdict_reports_its_own_regressions(history, upload_run, api):
    run = upload_run("cpu", {T1: "passed", T2: ("failed", "boom"), T3: "passed"}, day=DAY2)

    body = verdict(api, run)
    assert (body["ok"], [(g["test"], g["state"]) for g in body["gaps"]]) == (
        False,
        [(T2, "failed")],
    )


def test_a_first_run_opens_every_gap_it_has(upload_run, api):
    upload_run("cpu", BOTH_PASS, day=DAY1)
    body = verdict(api, upload_run("neuron", {T1: "passed"}, day=DAY1))

    assert (body["ok"], body["baseline_run"], body["opened"]["untracked"]) == (False, None, 1)


def test_a_first_runs_gaps_are_tracked_by_their_reasons_issues_and_none_close(upload_run, api):
    """A first run's statement takes its own path (nothing to close, its gaps' tests hashed):
    the same tracking as any run's, listed untracked first."""
    upload_run("cpu", {T1: "passed", T2: "passed", T3: "passed"}, day=DAY1)
    tracked = "not supported yet, see https://github.com/pytorch/xla/issues/99"
    run = upload_run("neuron", {T1: ("skipped", tracked), T2: ("failed", "boom")}, day=DAY1)

    body = verdict(api, run)
    assert (body["ok"], body["baseline_run"], body["closed"]) == (False, None, 0)
    assert body["opened"] == {
        "tracked": 1,
        "untracked": 2,
        "intended": 0,
        "tracked_closed": 0,
        "infra": 0,
        "uncovered": 0,
        "flaky": 0,
    }
    assert [(g["test"], g["state"], g["tracked"], g["issues"]) for g in body["gaps"]] == [
        (T2, "failed", False, []),
        (T3, "missing", False, []),
        (T1, "skipped", True, ["https://github.com/pytorch/xla/issues/99"]),
    ]


def test_verdict_needs_a_token_of_the_runs_project(history, api):
    other = project_create(slug="jax", backends=["cpu"], reference="cpu")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=other)}")

    assert client.get(f"/api/v1/runs/{history}/verdict/").status_code == 403
    # A run of a public project: anyone reads it (private ones: tests/parity/api/test_access.py).
    assert APIClient().get(f"/api/v1/runs/{history}/verdict/").status_code == 200
    assert api.get("/api/v1/runs/999999/verdict/").status_code == 404


def test_a_skip_citing_only_closed_issues_counts_untracked_when_the_project_says_so(
    history, upload_run, api, project
):
    reason = "not supported yet, see https://github.com/pytorch/xla/issues/99"
    upload_run("gpu", {T1: "passed", T2: ("skipped", reason)}, day=DAY1)  # links the issue
    TrackingIssue.objects.filter(key="pytorch/xla#99").update(state="closed", title="Fixed")
    run = upload_run("tpu", {T1: "passed", T2: ("skipped", reason)}, day=DAY2)

    lenient = verdict(api, run)
    assert (lenient["ok"], lenient["gaps"][0]["tracked"], lenient["gaps"][0]["tracked_closed"]) == (
        True,
        True,
        True,
    )
    assert lenient["opened"] == {
        "tracked": 1,
        "untracked": 0,
        "intended": 0,
        "tracked_closed": 1,
        "infra": 0,
        "uncovered": 0,
        "flaky": 0,
    }

    Project.objects.filter(pk=project.pk).update(closed_issues_untracked=True)
    strict = verdict(api, run)
    assert (strict["ok"], strict["gaps"][0]["tracked"], strict["gaps"][0]["tracked_closed"]) == (
        False,
        False,
        True,
    )
    assert strict["opened"] == {
        "tracked": 0,
        "untracked": 1,
        "intended": 0,
        "tracked_closed": 1,
        "infra": 0,
        "uncovered": 0,
        "flaky": 0,
    }

    TrackingIssue.objects.filter(key="pytorch/xla#99").update(state="open")  # reopened
    assert verdict(api, run)["ok"] is True


def test_a_quarantined_test_counts_tracked(history, upload_run, api):
    test_id = api.get("/api/v1/projects/pytorch-xla/tests/?q=test_2").json()["results"][0]["id"]
    quarantine = {
        "kind": "quarantine",
        "test": test_id,
        "issue_url": "https://github.com/pytorch/xla/issues/7",
    }
    assert api.post("/api/v1/projects/pytorch-xla/triage/", quarantine).status_code == 201

    run = upload_run("tpu", {T1: "passed", T2: ("failed", "flaky")}, day=DAY2)

    body = verdict(api, run)
    assert (body["ok"], body["gaps"][0]["triage"], body["gaps"][0]["tracked"]) == (
        True,
        "quarantine",
        True,
    )


def test_the_verdict_names_the_list_its_run_applied_and_an_exemption_added_since(
    history, ingest, api
):
    url = "/api/v1/projects/pytorch-xla"
    old = api.post(
        f"{url}/triage/",
        {"kind": "intended", "match": "test/old.py", "backends": ["tpu"], "note": "gone"},
        format="json",
    ).json()
    # CI reads the manifest (its plugin resolves), runs, and uploads with the version.
    resolved = api.post(
        f"{url}/manifest/resolve/", {"backend": "tpu", "tests": [T1, T2]}, format="json"
    ).json()
    version = resolved["version"]
    assert version == api.get(f"{url}/manifest/?backend=tpu").json()["version"]
    response = ingest(
        ("tpu.xml", run_xml({T1: "passed", T2: ("skipped", "not supported yet")})),
        backend="tpu",
        commit="b" * 40,
        branch="master",
        run="tpu-2",
        complete="true",
        timestamp=f"{DAY2}T12:00:00Z",
        exemptions_version=version,
    )
    run = response.json()["run"]
    before = verdict(api, run)
    assert before["ok"] is False
    assert before["exemptions"] == {"version": version, "known": True, "added": [], "removed": []}

    # A maintainer triages the gap and removes a stale exemption while the job waits.
    added = api.post(
        f"{url}/triage/",
        {"kind": "tracked", "match": before["gaps"][0]["test"], "backends": ["tpu"],
         "issue_url": "https://github.com/pytorch/xla/issues/7"},
        format="json",
    )  # fmt: skip
    assert added.status_code == 201, added.content
    assert api.delete(f"{url}/triage/{old['id']}/").status_code == 204

    body = verdict(api, run)  # the gate job, re-run
    assert body["ok"] is True
    assert body["opened"]["tracked"] == 1
    assert (body["gaps"][0]["exemption"], body["gaps"][0]["exemption_added"]) == (
        added.json()["id"],
        True,
    )
    assert body["exemptions"] == {
        "version": version,
        "known": True,
        "added": [{"id": added.json()["id"], "match": T2, "kind": "tracked"}],
        "removed": [{"id": old["id"], "match": "test/old.py", "kind": "intended"}],
    }
    printed = parity_ci.verdict_exemptions(body)
    assert f"version {version} applied; since then added #{added.json()['id']}" in printed
    assert f"removed #{old['id']} (intended test/old.py)" in printed
    # The gap it covers is counted on the exemption's line, which says it came after the run.
    assert body["exempted"] == [
        {
            "exemption": added.json()["id"],
            "match": T2,
            "kind": "tracked",
            "reason": "Exempted: a known issue",
            "issues": ["https://github.com/pytorch/xla/issues/7"],
            "tracked": True,
            "intended": False,
            "tracked_closed": False,
            "exemption_added": True,
            "gaps": 1,
        }
    ]
    assert f"#{added.json()['id']} {T2}, added after the run" in parity_ci.verdict_table(body)


def test_a_reason_exemption_is_part_of_the_lists_version(history, upload_run, ingest, api):
    """A triage of a skip reason exempts tests as a pattern does: one made after the run is
    among those added since, never "unchanged since" beside "added after the run"."""
    url = "/api/v1/projects/pytorch-xla"
    upload_run("gpu", {T1: "passed", T2: ("skipped", "by design")}, day=DAY1)
    reason_id = api.get(f"{url}/gaps/").json()["results"][0]["reason_id"]
    version = api.get(f"{url}/manifest/?backend=tpu").json()["version"]
    response = ingest(
        ("tpu.xml", run_xml({T1: "passed", T2: ("skipped", "by design")})),
        backend="tpu",
        commit="b" * 40,
        complete="true",
        timestamp=f"{DAY2}T12:00:00Z",
        exemptions_version=version,
    )
    triage = {"kind": "intended", "reason": reason_id, "note": "no such op on accelerators"}
    made = api.post(f"{url}/triage/", triage).json()

    assert api.get(f"{url}/manifest/?backend=tpu").json()["version"] != version
    body = verdict(api, response.json()["run"])
    listed = {"id": made["id"], "match": "reason: by design", "kind": "intended"}
    applied = {"version": version, "known": True, "added": [listed], "removed": []}
    assert body["exemptions"] == applied
    assert (body["gaps"][0]["exemption"], body["gaps"][0]["exemption_added"]) == (made["id"], True)
    assert "unchanged since" not in parity_ci.verdict_exemptions(body)


def test_added_since_leaves_out_what_does_not_hold_for_the_run_and_what_it_declared(
    history, ingest, api
):
    """Issue 45: a conditioned exemption that does not hold for the run's attributes was in
    neither the list CI fetched nor the one it would fetch now; a declaration the run's own
    upload sent (``hw_classification``) was added by no one. Neither is "added since"."""
    url = "/api/v1/projects/pytorch-xla"
    conditioned = api.post(
        f"{url}/triage/",
        {"kind": "intended", "match": "test/old.py", "backends": ["tpu"], "note": "7.1 only",
         "condition": "rocm < 7.14"},
        format="json",
    )  # fmt: skip
    assert conditioned.status_code == 201, conditioned.content
    manifest = api.get(f"{url}/manifest/", {"backend": "tpu", "attr": "rocm=7.14"}).json()
    assert manifest["exemptions"] == []
    response = ingest(
        ("tpu.xml", run_xml({T1: "passed", T2: "passed"})),
        backend="tpu",
        commit="b" * 40,
        branch="master",
        run="tpu-2",
        complete="true",
        timestamp=f"{DAY2}T12:00:00Z",
        attributes=json.dumps({"rocm": "7.14"}),
        exemptions_version=manifest["version"],
        hw_classification=json.dumps({"test/a.py::TestGeneric": "GENERIC"}),
    )
    assert response.status_code == 202, response.content
    assert Triage.objects.filter(source="hw_classification").exists()
    body = verdict(api, response.json()["run"])
    assert body["exemptions"] == {
        "version": manifest["version"], "known": True, "added": [], "removed": []
    }  # fmt: skip


def test_a_probe_runs_verdict_is_never_a_gate(history, ingest, api):
    response = ingest(
        ("tpu.xml", run_xml({T1: "passed", T2: ("failed", "boom")})),
        backend="tpu",
        commit="c" * 40,
        complete="true",
        probe="true",
    )
    body = verdict(api, response.json()["run"])
    assert (body["probe"], body["ok"], body["opened"]["untracked"]) == (True, True, 1)
    assert body["exemptions"]["version"] == ""
    assert "no list version sent" in parity_ci.verdict_exemptions(body)


def test_a_page_lists_the_first_gaps_untracked_first_and_counts_every_one(history, upload_run, api):
    """The run page asks for its first gaps only (a first run opens tens of thousands): the
    list is the full verdict's head, in the same order (the untracked T2 before the tracked
    T1), and the counts stay those of all."""
    from parity.models import Run
    from parity.result_reads.verdict import run_verdict

    tracked = "not supported yet, see https://github.com/pytorch/xla/issues/99"
    run = upload_run("tpu", {T1: ("skipped", tracked), T2: ("failed", "boom")}, day=DAY2)
    body = verdict(api, run)
    assert body["opened"] == {
        "tracked": 1,
        "untracked": 1,
        "intended": 0,
        "tracked_closed": 0,
        "infra": 0,
        "uncovered": 0,
        "flaky": 0,
    }
    assert [g["test"] for g in body["gaps"]] == [T2, T1]

    head = run_verdict(run=Run.objects.get(pk=run), gaps_limit=1)
    assert head.opened == body["opened"]
    assert head.gaps_total == len(body["gaps"]) == 2
    assert [(g.test, g.tracked, g.issues) for g in head.gaps] == [
        (g["test"], g["tracked"], g["issues"]) for g in body["gaps"][:1]
    ]


def test_a_run_on_a_branch_the_project_does_not_compare_says_so(runs_on_master, api):
    from parity.models import Run

    tpu = Run.objects.get(backend__name="tpu")

    body = verdict(api, tpu.pk)

    assert (body["branch"], body["default_branch"]) == ("master", "main")
    assert body["counts_toward_parity"] is False
    assert body["ok"] is True  # no baseline on main: it opens nothing, and the gate holds
    assert parity_ci.verdict_branch(body, project="pytorch-xla") == (
        "warning: this run is on branch master; pytorch-xla compares main: the verdict holds, "
        "but the run does not count toward parity (the pages show runs on main; the project's "
        "settings name its default branch)"
    )


def test_a_run_on_the_default_branch_counts_and_the_client_says_nothing(history, api):
    body = verdict(api, history)

    assert (body["branch"], body["default_branch"], body["counts_toward_parity"]) == (
        "master",
        "master",
        True,
    )
    assert parity_ci.verdict_branch(body, project="pytorch-xla") == ""


IDNA = {f"test/idna.py::TestIdna::test_{n:02}": "passed" for n in range(13)}


def test_exempted_gaps_are_a_line_per_exemption_and_untracked_gaps_keep_their_rows(
    history, upload_run, api
):
    """The 13 tests of a file tpu is exempted from (idna's) and a test exempted alone are a
    line each in CI's output and summary, with how many gaps, the reason and the issue; the
    untracked gap keeps its row."""
    upload_run("cpu", {**BOTH_PASS, **IDNA}, day=DAY2)
    url = "/api/v1/projects/pytorch-xla/triage/"
    whole = {"kind": "intended", "match": "test/idna.py", "note": "no IDNA codec on tpu"}
    issue = "https://github.com/pytorch/xla/issues/7"
    one = {"kind": "tracked", "match": T1, "issue_url": issue}
    ids = [
        api.post(url, {**t, "backends": ["tpu"]}, format="json").json()["id"] for t in (whole, one)
    ]
    run = upload_run(
        "tpu", {T1: ("skipped", "slow"), T2: ("failed", "boom")}, day=DAY2, time="13:00"
    )

    body = verdict(api, run)
    assert body["opened"] == {
        "tracked": 1,
        "untracked": 1,
        "intended": 13,
        "tracked_closed": 0,
        "infra": 0,
        "uncovered": 0,
        "flaky": 0,
    }
    groups = [(g["exemption"], g["match"], g["gaps"], g["reason"]) for g in body["exempted"]]
    assert groups == [
        (ids[0], "test/idna.py", 13, "no IDNA codec on tpu"),
        (ids[1], T1, 1, "Exempted: a known issue"),
    ]
    assert [g["issues"] for g in body["exempted"]] == [[], [issue]]

    printed = parity_ci.verdict_table(body).splitlines()
    assert [line.split()[:3] for line in printed] == [
        ["STATE", "TRACKING", "TEST"],
        ["failed", "untracked", T2],
        ["14", "new", "gap(s)"],
        ["TRACKING", "GAPS", "BY"],
        ["intended", "13", f"#{ids[0]}"],
        ["tracked", "1", f"#{ids[1]}"],
    ]
    assert (
        printed[4].split() == f"intended 13 #{ids[0]} test/idna.py no IDNA codec on tpu -".split()
    )
    client = parity_ci.Client("https://parity.example.org", project="pytorch-xla")
    markdown = parity_ci.verdict_markdown(body, client=client)
    assert "idna.py::" not in markdown
    page = "(https://parity.example.org/p/pytorch-xla/exemptions/?backend=tpu)"
    assert (
        f"| intended | 13 | [exemption {ids[0]}]{page} test/idna.py | no IDNA codec on tpu |  |"
        in markdown
    )
    row = (
        f"| tracked | 1 | [exemption {ids[1]}]{page} {parity_ci._md(T1)} "
        "| Exempted: a known issue |"
    )
    assert f"{row} [#7]({issue}) |" in markdown
