"""Suites on the live stack: the client parity serves (``/ci/parity_ci.py``) names each upload's
suite (``--suite``, or CI's ``TEST_CONFIG``, ``GITHUB_JOB``, ``CI_JOB_NAME``), gunicorn stores
it, the Celery worker ingests, and the suites matrix (its JSON and its page) equals a count made
here from the uploads sent: three backends, four suites, one never run on a backend, one
excluded there by the suite map with a reason and an issue, one stale (docs/suites.md). A run's
green is the gate's: a failing test the reference never passed keeps it green. Then the gate
follows the tier: an informing suite's verdict reports and CI passes, a blocking one's fails."""

import datetime
import json
import re
import time
import urllib.request
from collections import Counter

import pytest
from django.utils import timezone

from parity.clients import parity_ci
from parity.models import Backend, Run, SuiteSummary
from parity.services.suite_summaries import suite_summaries_rebuild
from parity.services.suites import suite_map_load, suite_save
from tests.e2e.test_variants import ci, served_client  # noqa: F401 (a fixture)
from tests.junit_builder import Case, junit_xml

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

BACKENDS = ("cpu", "neuron", "tpu")  # the columns: the reference first, then by name
ISSUE = "https://github.com/pytorch/xla/issues/9577"
MAP = {
    "main": {
        "backends": {
            "cpu": "test/run_tests.sh",
            "tpu": "test/tpu/run_tests.sh",
            "neuron": "test/neuron/run_tests.sh",
        }
    },
    "distributed": {},
    "torch_ops": {
        "backends": {
            "neuron": {"excluded": True, "reason": "never called there", "issue_url": ISSUE}
        }
    },
}
EXCLUDED = {("torch_ops", "neuron")}
# What each backend's CI sends: (logical suite, backend, how CI names it, outcomes, days ago).
# CI names the suite by flag, or by its variables; the map joins the names.
SENT = [
    ("main", "cpu", {"flag": "test/run_tests.sh"}, ("passed", "passed"), 0),
    # test_2 skipped, no reference run has it: no gap, green.
    ("main", "tpu", {"GITHUB_ACTIONS": "true", "GITHUB_JOB": "test/tpu/run_tests.sh"},
     ("passed", "passed", "skipped"), 0),
    ("main", "neuron", {"GITLAB_CI": "true", "CI_JOB_NAME": "test/neuron/run_tests.sh"},
     ("passed", "passed"), 0),
    ("distributed", "cpu", {"TEST_CONFIG": "distributed"}, ("passed",), 0),
    # test_2 fails, but no reference run has it passing: no gap, the gate passes, green.
    ("distributed", "tpu", {"TEST_CONFIG": "distributed", "GITHUB_ACTIONS": "true",
                            "GITHUB_JOB": "tpu-tests"}, ("passed", "passed", "failed"), 0),
    ("torch_ops", "cpu", {"flag": "torch_ops"}, ("passed",), 0),
    # test_0 passes on every reference run: failing it opens an untracked gap, red.
    ("torch_ops", "tpu", {"flag": "torch_ops"}, ("failed", "passed"), 0),
    # A suite no map names, last run three days ago: stale past its 48 hours.
    ("nightly-extras", "cpu", {"flag": "nightly-extras"}, ("passed",), 3),
]  # fmt: skip
STALE_AFTER = datetime.timedelta(hours=48)
# The runs the CI gate fails (red): tpu's torch_ops fails test_0, which every reference run
# passes (an untracked gap); cpu's distributed, the reference's own run, lacks test_1 that
# its run before (main) had (missing, and its coverage dropped). Each job is a run of its own.
RED = {("torch_ops", "tpu"), ("distributed", "cpu")}


def reports(folder, outcomes):
    folder.mkdir()
    cases = [Case("TestS", f"test_{i}", o, "boom" if o == "failed" else "", file="test/s.py")
             for i, o in enumerate(outcomes)]  # fmt: skip
    (folder / "TEST-s.xml").write_bytes(junit_xml(*cases))
    return str(folder)


def summaries_written(project, count: int) -> None:
    """Wait for the worker's suite tasks (queued after each ingest commits) to write
    ``count`` summaries."""
    deadline = time.monotonic() + 60
    while SuiteSummary.objects.filter(project=project).count() < count:
        assert time.monotonic() < deadline, "the suites' summaries were not written"
        time.sleep(0.2)


def expected_cells() -> dict[tuple[str, str], str]:
    """Each (suite, backend)'s status, counted from what was sent."""
    ran = {(suite, backend): days for suite, backend, _, _, days in SENT}
    suites = sorted({s for s, *_ in SENT} | set(MAP))
    cells = {}
    for suite in suites:
        for backend in BACKENDS:
            if (suite, backend) in EXCLUDED:
                cells[(suite, backend)] = "excluded"
            elif (suite, backend) not in ran:
                cells[(suite, backend)] = "never_ran"
            elif datetime.timedelta(days=ran[(suite, backend)]) > STALE_AFTER:
                cells[(suite, backend)] = "stale"
            else:
                cells[(suite, backend)] = "ran"
    return cells


def test_the_suites_matrix_equals_the_uploads_sent(live, project, served_client, tmp_path):  # noqa: F811
    Backend.objects.filter(project=project, name="gpu").delete()
    suite_map_load(project=project, suites=MAP)
    for number, (_, backend, naming, outcomes, days) in enumerate(SENT):
        commit = f"{days + 1:040x}"
        flag = ["--suite", naming["flag"]] if "flag" in naming else []
        variables = {k: v for k, v in naming.items() if k != "flag"}
        # Each job its own run key, the last of the backend's jobs completes it; jobs of one run
        # that name different suites are each a run of their own suite.
        done = ci(live, project, served_client, "upload", "--backend", backend, "--commit", commit,
                  "--run", f"{commit}-{backend}-{number}", "--complete", "--wait", *flag,
                  reports(tmp_path / f"r{number}", outcomes), **variables)  # fmt: skip
        assert done.returncode == 0, done.stderr
        if days:  # the clock of a live stack cannot move: the run happened days ago
            Run.objects.filter(project=project, key=f"{commit}-{backend}-{number}").update(
                started_at=timezone.now() - datetime.timedelta(days=days)
            )
    summaries_written(project, len(SENT))
    suite_summaries_rebuild(project=project)  # a run moved days back, as an import would

    url = f"{live.base_url}/api/v1/projects/{project.slug}/suites/"
    with urllib.request.urlopen(url, timeout=30) as answer:
        matrix = json.load(answer)

    assert matrix["backends"] == list(BACKENDS)
    got = {
        (row["name"], c["backend"]): c["status"] for row in matrix["suites"] for c in row["cells"]
    }
    expected = expected_cells()
    assert got == expected
    assert {k: v for k, v in matrix["statuses"].items() if v} == dict(Counter(expected.values()))
    rows = {row["name"]: row for row in matrix["suites"]}
    assert [r["name"] for r in matrix["suites"]] == sorted(rows, key=str.lower)
    assert rows["nightly-extras"]["mapped"] is False and rows["main"]["mapped"] is True
    # The excluded cell says why, and links its issue.
    neuron = next(c for c in rows["torch_ops"]["cells"] if c["backend"] == "neuron")
    assert (neuron["reason"], neuron["issue_url"]) == ("never called there", ISSUE)
    # Health: green where the gate passed, whatever failed or was skipped.
    for suite, backend, _, outcomes, _ in SENT:
        cell = next(c for c in rows[suite]["cells"] if c["backend"] == backend)
        green = (suite, backend) not in RED
        assert cell["last_run"]["tests"] == len(outcomes), (suite, backend)
        assert cell["health"] == {"runs": 1, "greens": int(green), "pass_rate": float(green),
                                  "timeouts": 0, "consecutive_greens": int(green)}, (
            suite, backend)  # fmt: skip
    # The names each backend's CI gave main, joined into one row.
    names = {c["backend"]: c["name"] for c in rows["main"]["cells"]}
    assert names == {"cpu": "test/run_tests.sh", "tpu": "test/tpu/run_tests.sh",
                     "neuron": "test/neuron/run_tests.sh"}  # fmt: skip

    # The page reads the same cells.
    with urllib.request.urlopen(f"{live.base_url}/p/{project.slug}/suites/", timeout=30) as page:
        html = page.read().decode()
    shown = re.findall(r'<td class="suite-cell (\w+)" data-backend="(\w+)"', html)
    assert Counter(status for status, _ in shown) == Counter(expected.values())

    # The gate follows the tier, on neuron. Each job a run of its own, the suites new.
    suite_save(project=project, name="gated", tiers={"promote_after": 1})
    suite_save(project=project, name="reporting")

    def gate(number, suite, outcome):
        commit = f"{100 + number:040x}"
        return ci(live, project, served_client, "upload", "--backend", "neuron", "--commit",
                  commit, "--run", f"gate-{number}", "--complete", "--wait", "--gate",
                  "--suite", suite, reports(tmp_path / f"g{number}", (outcome,)))  # fmt: skip

    # A mapped suite with no finished run is informing: its run opens a gap, the verdict says
    # not ok, and CI passes (it reports).
    reported = gate(1, "reporting", "failed")
    assert reported.returncode == 0, reported.stderr
    assert "NOT OK [reports only, not a gate: suite reporting informing]" in reported.stdout
    # One green promotes "gated" (its rule: one); its next run opening a gap fails CI.
    assert gate(2, "gated", "passed").returncode == 0
    deadline = time.monotonic() + 60
    while not SuiteSummary.objects.filter(suite="gated", tier="blocking").exists():
        assert time.monotonic() < deadline, "gated was not promoted"
        time.sleep(0.2)
    failed = gate(3, "gated", "failed")
    assert failed.returncode == parity_ci.EXIT_GATE, failed.stdout
    # A suite the map does not claim (CI named it: GITHUB_JOB...) gates as before suites.
    assert gate(4, "job-the-map-lacks", "passed").returncode == 0  # the gap closes
    unmapped = gate(5, "job-the-map-lacks", "failed")  # and opens again: not ok, and it gates
    assert unmapped.returncode == parity_ci.EXIT_GATE, unmapped.stdout
