"""Run health on the live stack (gunicorn, a Celery worker over Redis): CI fetches the client
the server serves, runs a backend's suite in two shards, a file of one shard segfaults, and the
verdict names that file and shard to rerun. With only infrastructure at fault the gate exits 7;
a test that fails beside it makes it exit 1 (docs/run-health.md)."""

import json
import sys
import urllib.request

import pytest

from parity.clients import parity_ci
from parity.models import Gap
from tests.e2e.test_run_manifest import current_run_is, suite_written
from tests.parity.clients.conftest import CLIENT_SECONDS, clean_environment

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# On tpu, CRASH=1 segfaults test_segv.py mid-file and FAIL=1 fails test_fail.py's test.
SUITE = {
    "test/test_ok.py": "def test_one():\n    pass\n\ndef test_two():\n    pass\n",
    "test/test_segv.py": (
        "import os, signal\n\n"
        "def test_before():\n    pass\n\n"
        "def test_crash():\n"
        "    if os.environ.get('CRASH') == '1':\n"
        "        os.kill(os.getpid(), signal.SIGSEGV)\n"
    ),
    "test/test_fail.py": ("import os\n\ndef test_x():\n    assert os.environ.get('FAIL') != '1'\n"),
    "test/test_more.py": "def test_m():\n    pass\n",
}
PYTEST = [sys.executable, "-m", "pytest", "{file}", "--junitxml={junit}", "-q"]
SHARDS = 2
# The shard test_segv.py falls in: the client splits the list by duration, none known here.
SEGV_SHARD = next(
    f"{n}/{SHARDS}"
    for n, files in enumerate(parity_ci.split_into_shards(sorted(SUITE), {}, SHARDS), start=1)
    if "test/test_segv.py" in files
)


@pytest.fixture
def served_ci(tmp_path, live, project):
    """The suite, and ``ci(backend, *args, **env)``: the client CI fetches from the server
    (``/ci/parity_ci.py``), run in the suite's folder with the project's token."""
    suite = suite_written(tmp_path, live, project, SUITE)
    with urllib.request.urlopen(f"{live.base_url}/ci/parity_ci.py", timeout=30) as served:
        (suite / "parity_ci.py").write_bytes(served.read())
    (suite / "every.json").write_text(json.dumps({"files": sorted(SUITE)}))

    def ci(backend: str, *args: str, **env: str):
        import subprocess

        return subprocess.run(
            [sys.executable, "parity_ci.py", *args],
            env=clean_environment(
                PARITY_URL=live.base_url,
                PARITY_PROJECT=project.slug,
                PARITY_TOKEN=live.token,
                PARITY_BACKEND=backend,
                PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",  # this repository's plugins: slow to load
                PYTHONDONTWRITEBYTECODE="1",
                **env,
            ),
            cwd=suite,
            capture_output=True,
            text=True,
            timeout=CLIENT_SECONDS,
            check=False,
        )

    return ci


def shards(ci, backend: str, commit: str, key: str, **env: str):
    """Run every shard of ``backend``'s job, the last completing the run and gating on it: that
    job's answer."""
    for n in range(1, SHARDS + 1):
        last = n == SHARDS
        done = ci(
            backend, "run", "--manifest", "every.json", "--shard", f"{n}/{SHARDS}",
            "--commit", commit, "--run", key, *(["--complete", "--gate"] if last else []),
            "--", *PYTEST, **env,
        )  # fmt: skip
        if not last:
            assert done.returncode == 0, done.stderr
    return done


def test_a_crashed_shard_is_named_to_rerun_and_only_infrastructure_exits_7(served_ci, project):
    reference = shards(served_ci, "cpu", "a" * 40, "cpu-1")
    assert reference.returncode == 0, reference.stderr
    current_run_is(project, "cpu", "cpu-1")

    crashed = shards(served_ci, "tpu", "b" * 40, "tpu-1", CRASH="1")

    assert crashed.returncode == parity_ci.EXIT_RERUN == 7, crashed.stdout + crashed.stderr
    assert "infrastructure lost files: rerun them (exit 7)" in crashed.stderr
    # (A segfaulting pytest leaves its line of dots open: the verdict may share it.)
    verdict_line = crashed.stdout[crashed.stdout.index("verdict for") :].splitlines()[0]
    assert ": ok;" in verdict_line and "run UNHEALTHY" in verdict_line, verdict_line
    rerun = [line.split() for line in crashed.stdout.splitlines() if "test_segv.py" in line]
    assert rerun == [["test/test_segv.py", "crashed", "shard", SEGV_SHARD, "SIGSEGV"]]
    current_run_is(project, "tpu", "tpu-1")
    gaps = Gap.objects.filter(backend__name="tpu", is_open=True)
    assert dict(gaps.values_list("test__key", "state")) == {
        "test/test_segv.py::test_before": "crashed",
        "test/test_segv.py::test_crash": "crashed",
    }

    # A bot reads the same from the query, and reruns that shard.
    run_id = gaps.first().opened_run_id
    query = served_ci("tpu", "query", "verdict", "--run", str(run_id), "--json")
    assert query.returncode == 0, query.stderr
    document = json.loads(query.stdout)
    assert (document["ok"], document["health"], document["opened"]["infra"]) == (
        True,
        "unhealthy",
        2,
    )
    [file] = document["rerun"]["files"]
    assert (file["file"], file["state"], file["shard"], file["exit_status"]) == (
        "test/test_segv.py",
        "crashed",
        SEGV_SHARD,
        "SIGSEGV",
    )
    [shard] = document["rerun"]["shards"]
    assert (shard["shard"], shard["upload"], shard["files"]) == (SEGV_SHARD, file["upload"], 1)
    assert {item["tracking"] for item in document["items"]} == {"infra"}

    # A test that fails beside the crash is the backend's: the gate fails on it (exit 1).
    failing = shards(served_ci, "tpu", "c" * 40, "tpu-2", CRASH="1", FAIL="1")
    assert failing.returncode == parity_ci.EXIT_GATE, failing.stdout + failing.stderr
    assert "NOT OK (opens untracked gaps)" in failing.stdout
    assert f"test/test_segv.py  crashed  shard {SEGV_SHARD}  SIGSEGV" in failing.stdout
