"""``parity_ci.py query ... --json``, the interface for bots, run as a bot runs it (a
subprocess) against the live stack, on data the client uploaded: the documented fields and
values of gaps, exemptions, a verdict and a test search, pages followed past the first, and the
refusals with their exit codes (docs/query.md)."""

import json
import re
from pathlib import Path

import parity_ci
import pytest

from parity.models import Backend, Project, Run
from parity.services.compare_rows import compare_view_refresh
from parity.services.compare_views import CompareRequest, compare_view_create
from parity.services.suites import suite_map_load
from tests.parity.clients.conftest import python38
from tests.parity.clients.test_parity_ci_live import (
    ISSUE,
    assert_ok,
    commit_of,
    current_run_wait,
    reference_current,
    write_reports,
)
from tests.parity.families_scenario import family_add
from tests.parity.transitions_scenario import upgrade_upload

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

QUERY_DOC = Path(__file__).resolve().parents[3] / "docs" / "query.md"
T = "test/test_q.py::TestQ::test_{}"


def documented(heading: str) -> set[str]:
    """The fields docs/query.md's table under ``heading`` lists: what a bot may rely on."""
    section = QUERY_DOC.read_text(encoding="utf-8").split(f"\n{heading}\n", 1)[1]
    table = section.split("\n#", 1)[0]
    return set(re.findall(r"^\| `(\w+)` \|", table, re.M))


NAMES = "abcdefg"


def query(parity_ci_run, *args: str, **options) -> dict:
    done = parity_ci_run("query", *args, "--json", **options)
    assert_ok(done)
    return json.loads(done.stdout)


def triage_post(http_api, body: dict) -> int:
    reply = http_api.request(
        "POST",
        "/api/v1/projects/pytorch-xla/triage/",
        body=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    assert reply.status == 201, str(reply)
    return reply.body["id"]


def tpu_run(parity_ci_run, live, tmp_path, name: str, results: dict[str, str]) -> Run:
    folder = write_reports(tmp_path / name, results)
    done = parity_ci_run(
        "upload",
        str(folder),
        "--backend",
        "tpu",
        "--commit",
        commit_of(name),
        "--complete",
        "--wait",
    )
    assert_ok(done)
    run = Run.objects.get(backend__name="tpu", commit=commit_of(name))
    current_run_wait(live, backend="tpu", run_id=run.pk)
    return run


@pytest.fixture
def gaps_on_tpu(parity_ci_run, http_api, live, tmp_path) -> dict[str, int]:
    """The reference passes test_a..g; tpu passes a, fails b, c, e, f and skips d; test_c is
    tracked by an issue, test_d intended: the exemptions' ids by name."""
    reference_current(parity_ci_run, live, tmp_path / "cpu", {T.format(n): "passed" for n in NAMES})
    results = {T.format(n): "failed" for n in "bcef"}
    results.update({T.format("a"): "passed", T.format("g"): "passed", T.format("d"): "skipped"})
    tpu_run(parity_ci_run, live, tmp_path, "tpu1", results)
    return {
        "c": triage_post(
            http_api,
            {"kind": "tracked", "match": T.format("c"), "backends": ["tpu"], "issue_url": ISSUE},
        ),
        "d": triage_post(
            http_api, {"kind": "intended", "match": T.format("d"), "note": "no d anywhere"}
        ),
    }


def test_gaps_say_test_backend_state_reason_and_tracking_page_by_page(parity_ci_run, gaps_on_tpu):
    every = query(parity_ci_run, "gaps", "--backend", "tpu", "--page-size", "2")

    assert (every["kind"], every["project"], every["count"], every["total"]) == (
        "gaps",
        "pytorch-xla",
        5,
        5,
    )
    assert every["truncated"] is False
    by_test = {gap["test"]: gap for gap in every["items"]}
    assert sorted(by_test) == [T.format(n) for n in "bcdef"]  # read in three pages of two
    b, c, d = (by_test[T.format(n)] for n in "bcd")
    assert (b["backend"], b["state"], b["reason"], b["tracking"]) == (
        "tpu",
        "failed",
        "failed here",
        "untracked",
    )
    assert (b["tracked"], b["intended"], b["issues"]) == (False, False, [])
    assert (c["tracking"], c["tracked"], c["issues"]) == ("tracked", True, [ISSUE])
    assert (d["state"], d["reason"], d["tracking"]) == ("skipped", "skipped here", "intended")
    assert set(b) == documented("### `gaps` items")
    assert set(every) == documented("## The document") | documented("### The `gaps` document")
    assert every["suites"] == []  # no suite here never ran

    first = query(parity_ci_run, "gaps", "--limit", "3", "--page-size", "2")
    untracked = query(parity_ci_run, "gaps", "--untracked", "--state", "failed")
    found = query(parity_ci_run, "gaps", "--q", "TEST_E")
    none = query(parity_ci_run, "gaps", "--backend", "gpu")

    assert (first["count"], first["total"], first["truncated"]) == (3, 5, True)
    assert [g["test"] for g in first["items"]] == [g["test"] for g in every["items"][:3]]
    assert sorted(g["test"] for g in untracked["items"]) == [T.format(n) for n in "bef"]
    assert [g["test"] for g in found["items"]] == [T.format("e")]
    assert (none["count"], none["items"]) == (0, [])

    text = parity_ci_run("query", "gaps", "--backend", "tpu")
    assert_ok(text)
    rows = text.stdout.splitlines()
    assert [row.split()[:4] for row in rows if T.format("b") in row] == [
        ["failed", "untracked", "tpu", T.format("b")]
    ]
    assert rows[-1] == "5 of 5 gaps"


def test_exemptions_say_pattern_reason_issue_and_backends(parity_ci_run, gaps_on_tpu):
    every = query(parity_ci_run, "exemptions", "--page-size", "1")
    on_gpu = query(parity_ci_run, "exemptions", "--backend", "gpu")
    intended = query(parity_ci_run, "exemptions", "--state", "intended")

    assert (every["kind"], every["count"], every["total"], every["truncated"]) == (
        "exemptions",
        2,
        2,
        False,
    )
    by_id = {e["id"]: e for e in every["items"]}
    tracked, kept = by_id[gaps_on_tpu["c"]], by_id[gaps_on_tpu["d"]]
    assert (tracked["kind"], tracked["pattern"], tracked["issue"], tracked["backends"]) == (
        "tracked",
        T.format("c"),
        ISSUE,
        ["tpu"],
    )
    assert (kept["kind"], kept["pattern"], kept["reason"], kept["issue"], kept["backends"]) == (
        "intended",
        T.format("d"),
        "no d anywhere",
        None,
        [],  # every backend
    )
    assert (kept["expired"], kept["expires"]) == (False, None)
    assert set(kept) == documented("### `exemptions` items")
    assert [e["id"] for e in on_gpu["items"]] == [gaps_on_tpu["d"]]
    assert on_gpu["total"] == 1  # the server picks a backend's exemptions, and counts them
    assert [e["id"] for e in intended["items"]] == [gaps_on_tpu["d"]]


def test_a_variant_s_exemptions_are_its_family_s_too(parity_ci_run, http_api, gaps_on_tpu):
    family_add(Project.objects.get(slug="pytorch-xla"))
    rocm = triage_post(
        http_api,
        {"kind": "tracked", "match": T.format("e"), "backends": ["rocm"], "issue_url": ISSUE},
    )

    variant = query(parity_ci_run, "exemptions", "--backend", "rocm-gfx942")

    assert sorted(e["id"] for e in variant["items"]) == sorted([rocm, gaps_on_tpu["d"]])
    assert (variant["count"], variant["total"]) == (2, 2)


def test_verdict_says_ok_opened_and_closed_with_every_gap(
    parity_ci_run, gaps_on_tpu, live, tmp_path
):
    # b and c pass now (closed 2); g fails (opened 1, untracked): not ok.
    results = {T.format(n): "passed" for n in "abcg"}
    results.update({T.format("e"): "failed", T.format("f"): "failed", T.format("d"): "skipped"})
    results[T.format("g")] = "failed"
    run = tpu_run(parity_ci_run, live, tmp_path, "tpu2", results)

    verdict = query(parity_ci_run, "verdict", "--run", str(run.pk), "--page-size", "1")

    assert (verdict["kind"], verdict["run"], verdict["backend"]) == ("verdict", run.pk, "tpu")
    assert (verdict["ok"], verdict["complete"], verdict["probe"]) == (False, True, False)
    assert verdict["opened"] == {
        "untracked": 1, "tracked": 0, "intended": 0, "infra": 0, "uncovered": 0
    }  # fmt: skip
    assert verdict["closed"] == 2
    assert (verdict["count"], verdict["total"], verdict["truncated"]) == (1, 1, False)
    assert set(verdict) == documented("## The document") | documented("### `verdict`")
    (gap,) = verdict["items"]
    assert set(gap) == documented("### `gaps` items")
    assert (gap["test"], gap["state"], gap["tracking"], gap["exemption"]) == (
        T.format("g"),
        "failed",
        "untracked",
        None,
    )

    first = Run.objects.get(commit=commit_of("tpu1"))
    opened = query(parity_ci_run, "verdict", "--run", str(first.pk), "--page-size", "2")
    assert opened["opened"]["untracked"] + opened["opened"]["tracked"] >= 3
    assert opened["count"] == opened["total"] > 2  # past the first page of two
    text = parity_ci_run("query", "verdict", "--run", str(run.pk))
    assert_ok(text)
    assert text.stdout.startswith(f"verdict for tpu run {run.pk}: NOT OK; opened 1 untracked")


def test_tests_are_searched_page_by_page(parity_ci_run, gaps_on_tpu):
    found = query(parity_ci_run, "tests", "--q", "test_q.py::TestQ", "--page-size", "3")
    some = query(parity_ci_run, "tests", "--q", "TestQ", "--limit", "2", "--page-size", "3")

    assert (found["kind"], found["count"], found["total"]) == ("tests", 7, 7)
    assert sorted(t["test"] for t in found["items"]) == [T.format(n) for n in NAMES]
    assert {t["file"] for t in found["items"]} == {"test/test_q.py"}
    assert set(found["items"][0]) == documented("### `tests` items")
    assert all(isinstance(t["id"], int) for t in found["items"])
    assert (some["count"], some["total"], some["truncated"]) == (2, 7, True)
    oldest = python38()  # the client's oldest Python, where this machine has one
    if oldest:
        again = query(parity_ci_run, "tests", "--q", "test_q.py::TestQ", python=oldest)
        assert again == query(parity_ci_run, "tests", "--q", "test_q.py::TestQ")


def test_refusals_name_the_problem_and_exit_with_its_code(parity_ci_run, live):
    unknown = parity_ci_run("query", "gaps", "--json", env={"PARITY_PROJECT": "nope"})
    refused = parity_ci_run("query", "gaps", "--json", env={"PARITY_TOKEN": "not-a-token"})
    no_run = parity_ci_run("query", "verdict", "--run", "999999", "--json")
    needs_run = parity_ci_run("query", "verdict", "--json")
    misplaced = parity_ci_run("query", "tests", "--backend", "tpu", "--json")
    no_kind = parity_ci_run("query", "runs", "--json")
    bad_state = parity_ci_run("query", "gaps", "--state", "melted", "--json")

    for done in (unknown, refused, no_run, needs_run, misplaced, no_kind, bad_state):
        assert done.stdout == ""  # a bot reads nothing half-written
    assert (unknown.returncode, refused.returncode) == (
        parity_ci.EXIT_REJECTED,
        parity_ci.EXIT_AUTH,
    )
    assert "HTTP 404" in unknown.stderr
    assert "HTTP 401" in refused.stderr and "PARITY_TOKEN" in refused.stderr
    assert no_run.returncode == parity_ci.EXIT_REJECTED and "HTTP 404" in no_run.stderr
    assert needs_run.returncode == parity_ci.EXIT_USAGE and "--run ID" in needs_run.stderr
    assert misplaced.returncode == parity_ci.EXIT_USAGE
    assert "query tests takes no --backend (it takes --q)" in misplaced.stderr
    assert no_kind.returncode == parity_ci.EXIT_USAGE and "invalid choice" in no_kind.stderr
    assert bad_state.returncode == parity_ci.EXIT_REJECTED and "melted" in bad_state.stderr


def test_suites_list_each_suite_on_each_backend_as_the_api_does(
    parity_ci_run, http_api, live, project, tmp_path
):
    suite_map_load(
        project=project,
        suites={
            "main": {"backends": {"cpu": "test/run_tests.sh", "tpu": "test/tpu/run_tests.sh"}},
            "torch_ops": {
                "backends": {
                    "tpu": {"excluded": True, "reason": "never called", "issue_url": ISSUE}
                }
            },
        },
    )
    for backend, suite, outcome in (
        ("cpu", "test/run_tests.sh", "passed"),
        ("tpu", "test/tpu/run_tests.sh", "failed"),
    ):
        folder = write_reports(tmp_path / backend, {T.format("a"): outcome})
        done = parity_ci_run(
            "upload", str(folder), "--backend", backend, "--suite", suite,
            "--commit", commit_of(backend), "--complete", "--wait",
        )  # fmt: skip
        assert_ok(done)

    every = query(parity_ci_run, "suites")
    on_tpu = query(parity_ci_run, "suites", "--backend", "tpu", "--limit", "1")
    api = http_api.request("GET", "/api/v1/projects/pytorch-xla/suites/").body

    assert (every["kind"], every["project"], every["truncated"]) == ("suites", "pytorch-xla", False)
    # One item per suite and backend, in the API's order, each the API's cell.
    cells = [(row, cell) for row in api["suites"] for cell in row["cells"]]
    assert [(i["suite"], i["backend"]) for i in every["items"]] == [
        (row["name"], cell["backend"]) for row, cell in cells
    ]
    assert every["count"] == every["total"] == 2 * len(api["backends"])
    for item, (row, cell) in zip(every["items"], cells, strict=True):
        assert (item["status"], item["tier"], item["name"]) == (
            cell["status"],
            cell["tier"],
            cell["name"],
        )
        assert item["pass_rate"] == cell["health"]["pass_rate"]
        assert item["mapped"] == row["mapped"]
        assert item["last_run"] == (cell["last_run"] or {}).get("run")
    by_cell = {(i["suite"], i["backend"]): i for i in every["items"]}
    cpu, tpu = by_cell[("main", "cpu")], by_cell[("main", "tpu")]
    assert (cpu["status"], cpu["greens"], cpu["runs"], cpu["pass_rate"]) == ("ran", 1, 1, 1.0)
    assert cpu["last_run"] == Run.objects.get(backend__name="cpu").pk
    assert (tpu["status"], tpu["name"], tpu["pass_rate"]) == ("ran", "test/tpu/run_tests.sh", 0.0)
    excluded = by_cell[("torch_ops", "tpu")]
    assert (excluded["status"], excluded["reason"], excluded["issue"]) == (
        "excluded",
        "never called",
        ISSUE,
    )
    assert by_cell[("torch_ops", "cpu")]["status"] == "never_ran"
    assert set(cpu) == documented("### `suites` items")
    assert (on_tpu["count"], on_tpu["total"], on_tpu["truncated"]) == (1, 2, True)
    assert on_tpu["items"] == [by_cell[("main", "tpu")]]

    text = parity_ci_run("query", "suites", "--backend", "tpu")
    assert_ok(text)
    lines = text.stdout.splitlines()
    assert lines[0].split()[:4] == ["main", "tpu", "ran", "informing"]
    assert "never called" in lines[1] and ISSUE in lines[1]
    assert lines[-1] == "2 of 2 suite cells"


def compare_view_seeded(project: Project) -> str:
    """A compare view of tpu against the reference, computed on the runs of ``gaps_on_tpu``
    (one run each: too few for a regression; test_d, skipped on tpu, is missing there)."""
    view = compare_view_create(
        project=project,
        request=CompareRequest(
            name="tpu-vs-cpu",
            sample=Backend.objects.get(project=project, name="tpu"),
            basis=Backend.objects.get(project=project, name="cpu"),
            min_failures=1,
        ),
    )
    compare_view_refresh(view=view)
    return view.name


def api_compare_tests(http_api, name: str, query: str = "") -> tuple[dict, list[dict]]:
    """The report's first page and every page's tests, ``next`` followed as the API says."""
    url = f"/api/v1/projects/pytorch-xla/compare/{name}/?limit=2{query}"
    first, tests = None, []
    while url:
        page = http_api.request("GET", url).body
        first = first or page
        tests += page["tests"]
        url = page["next"] and page["next"].split("://", 1)[1].split("/", 1)[1]
        url = url and "/" + url
    return first, tests


def test_compare_views_and_a_view_s_tests_read_as_the_api_says(
    parity_ci_run, http_api, project, gaps_on_tpu
):
    name = compare_view_seeded(project)
    views = query(parity_ci_run, "compare")
    report = query(parity_ci_run, "compare", name, "--page-size", "2")
    api_report, api_tests = api_compare_tests(http_api, name)
    [api_view] = http_api.request("GET", "/api/v1/projects/pytorch-xla/compare/").body

    assert (views["kind"], views["count"], views["total"], views["truncated"]) == (
        "compare", 1, 1, False,
    )  # fmt: skip
    [view] = views["items"]
    assert view == {k: api_view[k] for k in documented("### `compare` items")}
    assert set(view) == documented("### `compare` items")
    # Every page followed: each test's state and sentence as the API says, in its order.
    assert len(api_tests) == api_report["count"] == 7 > 2
    assert (report["count"], report["total"], report["truncated"]) == (7, 7, False)
    assert [(t["test"], t["state"], t["sentence"], t["p"]) for t in report["items"]] == [
        (t["test"], t["state"], t["sentence"], t["p"]) for t in api_tests
    ]
    assert [(t["sample"], t["basis"]) for t in report["items"]] == [
        (t["sample"], t["basis"]) for t in api_tests
    ]
    assert [t["state"] for t in report["items"]].count("missing_sample") == 1
    assert {t["state"] for t in report["items"]} == {"missing_sample", "no_difference"}
    assert set(report["items"][0]) == documented("### `compare NAME` items")
    assert report["view"] == view and report["counts"] == api_report["counts"]
    assert (report["sample_runs"], report["basis_runs"]) == (1, 1)
    assert {k: report[k] for k in ("computed_at", "since")} == {
        k: api_report[k] for k in ("computed_at", "since")
    }
    fields = documented("### The `compare NAME` document")
    assert fields <= set(report) and fields == {
        "view", "computed_at", "since", "sample_runs", "basis_runs", "counts",
    }  # fmt: skip

    same = query(parity_ci_run, "compare", name, "--state", "no_difference", "--limit", "1")
    _, api_same = api_compare_tests(http_api, name, "&state=no_difference")
    assert same["total"] == len(api_same) == api_report["counts"]["no_difference"] == 6
    assert (same["count"], same["truncated"]) == (1, True)
    assert same["items"][0]["test"] == api_same[0]["test"]

    text = parity_ci_run("query", "compare", name)
    assert_ok(text)
    lines = text.stdout.splitlines()
    assert lines[0].startswith(f"compare {name}: tpu against cpu over 14 days (1 and 1 runs)")
    assert [line.split()[:2] for line in lines[1:-1]] == [
        [t["state"], t["test"]] for t in api_tests
    ]
    assert all(t["sentence"] in line for t, line in zip(api_tests, lines[1:-1], strict=True))
    assert lines[-1] == "7 of 7 tests"
    listed = parity_ci_run("query", "compare")
    assert_ok(listed)
    assert listed.stdout.splitlines()[0].split()[:4] == [name, "tpu", "against", "cpu"]

    no_name = parity_ci_run("query", "compare", "--state", "regressed")
    other = parity_ci_run("query", "gaps", name)
    unknown = parity_ci_run("query", "compare", "no-such-view")
    assert no_name.returncode == parity_ci.EXIT_USAGE and "NAME" in no_name.stderr
    assert other.returncode == parity_ci.EXIT_USAGE
    assert "query gaps takes no NAME" in other.stderr
    assert unknown.returncode == parity_ci.EXIT_REJECTED and "HTTP 404" in unknown.stderr
    assert not unknown.stdout


def test_transitions_read_as_the_api_says(parity_ci_run, http_api, xla, ingest):
    upgrade_upload(xla, ingest)
    every = query(parity_ci_run, "transitions", "--page-size", "1")
    api = http_api.request("GET", "/api/v1/projects/pytorch-xla/transitions/").body
    [moved] = api["results"]
    on_it = query(parity_ci_run, "transitions", "--backend", moved["backend"])
    elsewhere = query(parity_ci_run, "transitions", "--backend", "cpu")

    assert (every["kind"], every["count"], every["total"], every["truncated"]) == (
        "transitions", 1, api["count"], False,
    )  # fmt: skip
    [item] = every["items"]
    assert set(item) == documented("### `transitions` items")
    assert item == {k: moved[k] for k in documented("### `transitions` items")}
    assert item["changed"] == {"rocm": ["7.1", "7.14"]} and sum(item["counts"].values()) > 0
    assert on_it["items"] == every["items"] and on_it["total"] is None
    assert elsewhere["items"] == []

    text = parity_ci_run("query", "transitions")
    assert_ok(text)
    first = text.stdout.splitlines()[0]
    assert first.split()[:2] == [str(moved["id"]), moved["backend"]]
    assert "rocm 7.1 -> 7.14" in first
    assert f"{moved['counts']['pass_to_fail']} pass->fail" in first
