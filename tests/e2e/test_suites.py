"""Suites on the live stack: the client parity serves (``/ci/parity_ci.py``) names each upload's
suite (``--suite``, or CI's ``TEST_CONFIG``, ``GITHUB_JOB``, ``CI_JOB_NAME``), gunicorn stores
it, the Celery worker ingests, and the suites matrix (its JSON and its page) equals a count made
here from the uploads sent: three backends, four suites, one never run on a backend, one
excluded there by the suite map with a reason and an issue, one stale (docs/suites.md)."""

import datetime
import json
import re
import urllib.request
from collections import Counter

import pytest
from django.utils import timezone

from parity.models import Backend, Run
from parity.services.suites import suite_map_load
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
    ("main", "tpu", {"GITHUB_ACTIONS": "true", "GITHUB_JOB": "test/tpu/run_tests.sh"},
     ("passed", "skipped"), 0),
    ("main", "neuron", {"GITLAB_CI": "true", "CI_JOB_NAME": "test/neuron/run_tests.sh"},
     ("passed", "passed"), 0),
    ("distributed", "cpu", {"TEST_CONFIG": "distributed"}, ("passed",), 0),
    ("distributed", "tpu", {"TEST_CONFIG": "distributed", "GITHUB_ACTIONS": "true",
                            "GITHUB_JOB": "tpu-tests"}, ("passed",), 0),
    ("torch_ops", "cpu", {"flag": "torch_ops"}, ("passed",), 0),
    ("torch_ops", "tpu", {"flag": "torch_ops"}, ("passed", "failed"), 0),
    # A suite no map names, last run three days ago: stale past its 48 hours.
    ("nightly-extras", "cpu", {"flag": "nightly-extras"}, ("passed",), 3),
]  # fmt: skip
STALE_AFTER = datetime.timedelta(hours=48)


def reports(folder, outcomes):
    folder.mkdir()
    cases = [Case("TestS", f"test_{i}", o, "boom" if o == "failed" else "", file="test/s.py")
             for i, o in enumerate(outcomes)]  # fmt: skip
    (folder / "TEST-s.xml").write_bytes(junit_xml(*cases))
    return str(folder)


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
    # Health, from the tests each upload held: torch_ops ran on tpu with a test failing.
    for suite, backend, _, outcomes, _ in SENT:
        cell = next(c for c in rows[suite]["cells"] if c["backend"] == backend)
        green = "failed" not in outcomes
        assert cell["last_run"]["tests"] == len(outcomes), (suite, backend)
        assert cell["health"] == {"runs": 1, "greens": int(green), "pass_rate": float(green),
                                  "timeouts": 0, "consecutive_greens": int(green)}  # fmt: skip
    # The names each backend's CI gave main, joined into one row.
    names = {c["backend"]: c["name"] for c in rows["main"]["cells"]}
    assert names == {"cpu": "test/run_tests.sh", "tpu": "test/tpu/run_tests.sh",
                     "neuron": "test/neuron/run_tests.sh"}  # fmt: skip

    # The page reads the same cells.
    with urllib.request.urlopen(f"{live.base_url}/p/{project.slug}/suites/", timeout=30) as page:
        html = page.read().decode()
    shown = re.findall(r'<td class="suite-cell (\w+)" data-backend="(\w+)"', html)
    assert Counter(status for status, _ in shown) == Counter(expected.values())
