"""``parity_ci.py run --backend X`` on the live stack over a small real pytest suite applies X's
exemptions in each file's process, with no ``PARITY_BACKEND`` in the environment: the backend,
server, project and token given to ``run`` reach the pytest plugin (and the unittest runner,
for a script-style suite). It says how many exemptions it applies, and each file's output
comes before the verdict."""

import subprocess
import sys

import pytest

from parity.models import Gap, Outcome, Result, Run
from parity.services.triage import TriageRequest, triage_create
from tests.e2e.test_run_manifest import COMMIT, current_run_is, manifest_file, suite_written
from tests.parity.clients.conftest import CLIENT_SECONDS, CLIENTS_DIR, clean_environment

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# On tpu the exempted tests fail if they run: the file the backend lacks, and one test.
RAN = "import os\n\nassert_ran = os.environ['BACKEND'] == 'cpu'\n"
SUITE = {
    "test/test_ok.py": "def test_one():\n    pass\n",
    "test/test_device.py": RAN + "\ndef test_a():\n    assert assert_ran\n",
    "test/test_partly.py": (
        RAN + "\ndef test_keep():\n    pass\n\ndef test_hangs():\n    assert assert_ran\n"
    ),
}
PYTEST = [sys.executable, "-m", "pytest", "{file}", "--junitxml={junit}", "-q"]
UNITTEST = [sys.executable, "-m", "parity_unittest", "{file}", "--junit-xml", "{junit}"]
SCRIPT = """import os
import unittest


class TestUnits(unittest.TestCase):
    def test_keep(self):
        pass

    def test_hangs(self):
        self.assertEqual(os.environ["BACKEND"], "cpu")


if __name__ == "__main__":
    unittest.main()
"""
ISSUE = "https://github.com/pytorch/xla/issues/41"


def run(
    live, project, suite, backend: str, *args: str, command=PYTEST
) -> subprocess.CompletedProcess:
    """``parity_ci.py run --backend BACKEND ARGS`` with the server settings in the environment
    but no PARITY_BACKEND; standard error goes into standard output, as a CI log shows them."""
    env = clean_environment(
        PARITY_URL=live.base_url,
        PARITY_PROJECT=project.slug,
        PARITY_TOKEN=live.token,
        BACKEND=backend,  # what the suite's tests read, not the plugin
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",  # this repository's plugins: slow to load
        PYTHONDONTWRITEBYTECODE="1",
    )
    assert "PARITY_BACKEND" not in env  # the backend is the flag's alone
    client = [sys.executable, str(CLIENTS_DIR / "parity_ci.py"), "run", "--backend", backend]
    return subprocess.run(
        [*client, "--commit", COMMIT, "--run", f"{backend}-1", *args, "--", *command],
        env=env,
        cwd=suite,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=CLIENT_SECONDS,
        check=False,
    )


@pytest.fixture
def suite(tmp_path, live, project):
    return suite_written(tmp_path, live, project, SUITE)


def exempted(live, project, suite) -> list[int]:
    """The reference's run of every file, then tpu's exemptions: the file it lacks and one
    test; their ids."""
    every = manifest_file(suite, SUITE)
    reference = run(live, project, suite, "cpu", "--manifest", every, "--complete", "--wait")
    assert reference.returncode == 0, reference.stdout
    current_run_is(project, "cpu", "cpu-1")
    requests = (
        TriageRequest(
            kind="intended", backend="tpu", match="test/test_device.py", note="no such device"
        ),
        TriageRequest(
            kind="tracked", backend="tpu", match="test/test_partly.py::test_hangs", issue_url=ISSUE
        ),
    )
    return [triage_create(project=project, request=request).pk for request in requests]


def test_run_applies_the_backends_exemptions_given_as_a_flag(live, project, suite):
    device, _ = exempted(live, project, suite)

    # tpu's shard comes from the server: every file but the one it is exempted from.
    done = run(live, project, suite, "tpu", "--complete", "--wait", "--gate")

    output = done.stdout
    assert done.returncode == 0, output
    assert "[1/2] test/test_ok.py: exit 0" in output
    assert "[2/2] test/test_partly.py: exit 0" in output
    assert "test_device.py: starting" not in output
    assert "applying 2 exemption(s) of tpu (list version " in output
    assert "1 leave whole files out, 1 name tests of the 2 file(s) to run here (1 tracked)" in (
        output
    )
    # Each file's own output (pytest's -q summary) comes between its lines, before the verdict.
    summary = output.index("1 passed, 1 skipped")
    assert output.index("[2/2] test/test_partly.py: starting") < summary
    assert summary < output.index("[2/2] test/test_partly.py: exit 0")
    verdict = output[output.index("verdict for tpu run") :]
    assert summary < output.index("verdict for tpu run")
    # The verdict folds the exempted file's gaps into its exemption's line.
    assert "test/test_device.py::" not in verdict
    line = f"intended 1 #{device} test/test_device.py no such device -"
    assert line.split() in [printed.split() for printed in verdict.splitlines()]
    current_run_is(project, "tpu", "tpu-1")

    # The exempted test was skipped with the exemption's message, not run.
    tpu_run = Run.objects.get(project=project, backend__name="tpu", key="tpu-1")
    hangs = Result.objects.get(run=tpu_run, test__key="test/test_partly.py::test_hangs")
    assert hangs.outcome == Outcome.SKIPPED and ISSUE in hangs.message
    gaps = Gap.objects.filter(backend__name="tpu", is_open=True)
    assert {(g.test.key, g.tracked, g.intended) for g in gaps} == {
        ("test/test_partly.py::test_hangs", True, False),
        ("test/test_device.py::test_a", False, True),
    }
    # The reports carried the list version run announced, which the verdict names.
    assert tpu_run.exemptions_version
    assert f"list version {tpu_run.exemptions_version})" in output
    assert f"exemptions: version {tpu_run.exemptions_version} applied, unchanged" in output


def test_a_probe_run_runs_the_exempted_tests(live, project, suite):
    exempted(live, project, suite)

    done = run(live, project, suite, "tpu", "--probe", "--complete", "--wait")

    assert done.returncode == 0, done.stdout
    assert "probing (running the tests of) 2 exemption(s) of tpu" in done.stdout
    assert "[2/2] test/test_partly.py: exit 1" in done.stdout  # test_hangs ran, and failed
    probe = Run.objects.get(project=project, backend__name="tpu", key="tpu-1")
    hangs = Result.objects.get(run=probe, test__key="test/test_partly.py::test_hangs")
    assert (probe.probe, hangs.outcome) == (True, Outcome.FAILED)


def test_run_applies_them_through_the_unittest_runner_too(live, project, tmp_path):
    suite_written(tmp_path, live, project, {"test/test_units.py": SCRIPT})
    every = manifest_file(tmp_path, ["test/test_units.py"])
    reference = run(
        live, project, tmp_path, "cpu", "--manifest", every, "--complete", "--wait",
        command=UNITTEST,
    )  # fmt: skip
    assert reference.returncode == 0, reference.stdout
    current_run_is(project, "cpu", "cpu-1")
    hangs = "test/test_units.py::TestUnits::test_hangs"
    request = TriageRequest(kind="tracked", backend="tpu", match=hangs, issue_url=ISSUE)
    triage_create(project=project, request=request)

    done = run(live, project, tmp_path, "tpu", "--complete", "--wait", command=UNITTEST)

    assert done.returncode == 0, done.stdout
    assert "[1/1] test/test_units.py: exit 0" in done.stdout
    tpu_run = Run.objects.get(project=project, backend__name="tpu", key="tpu-1")
    result = Result.objects.get(run=tpu_run, test__key=hangs)
    assert result.outcome == Outcome.SKIPPED and ISSUE in result.message
