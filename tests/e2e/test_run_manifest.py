"""``parity_ci.py run`` on the live stack over a small real pytest suite: each file runs in its
own process, and a backend's tests that produced no result read as what happened to their file
(a segfault, a timeout, a file of no tests, a lost shard's files never started), never as
``missing``, which stays "the backend was never told to run it"."""

import json
import sys

import pytest

from parity.models import BackendState, Gap, Run, RunFile
from tests.e2e.stack import wait_for
from tests.parity.clients.conftest import clean_environment, client_run

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# Each file's tests as the reference (cpu) runs them; on tpu the files misbehave.
SUITE = {
    "test/test_ok.py": "def test_one():\n    pass\n\ndef test_two():\n    pass\n",
    "test/test_segv.py": (
        "import os, signal\n\n"
        "def test_before():\n    pass\n\n"
        "def test_crash():\n"
        "    if os.environ['BACKEND'] == 'tpu':\n"
        "        os.kill(os.getpid(), signal.SIGSEGV)\n"
    ),
    "test/test_slow.py": (
        "import os, time\n\n"
        "def test_sleeps():\n"
        "    if os.environ['BACKEND'] == 'tpu':\n"
        "        time.sleep(300)\n"
    ),
    "test/test_empty.py": (
        "import os\n\nif os.environ['BACKEND'] == 'cpu':\n    def test_here():\n        pass\n"
    ),
    "test/test_lost_a.py": "def test_a():\n    pass\n",
    "test/test_lost_b.py": "def test_b():\n    pass\n",
}
RAN_ON_TPU = ["test/test_ok.py", "test/test_segv.py", "test/test_slow.py", "test/test_empty.py"]
PYTEST = [sys.executable, "-m", "pytest", "{file}", "--junitxml={junit}", "-q"]
COMMIT = "d" * 40
CI_URL = "https://ci.example.org/runs/7"


def ci(live, project, suite, backend: str, *args: str):
    env = clean_environment(
        PARITY_URL=live.base_url,
        PARITY_PROJECT=project.slug,
        PARITY_TOKEN=live.token,
        BACKEND=backend,
        PARITY_BACKEND=backend,
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",  # this repository's plugins: slow to load
        PYTHONDONTWRITEBYTECODE="1",
    )
    return client_run(*args, env=env, cwd=suite)


def manifest_file(suite, files) -> str:
    path = suite / f"manifest-{len(files)}.json"
    path.write_text(json.dumps({"files": list(files)}))
    return str(path)


def current_run_is(project, backend: str, key: str) -> None:
    run = Run.objects.get(project=project, backend__name=backend, key=key)
    wait_for(
        lambda: BackendState.objects.filter(backend=run.backend, current_run=run).exists(),
        seconds=120,
        what=f"{backend}'s run {key} to become current",
    )


def suite_written(folder, live, project, files: dict[str, str]):
    """``files`` (path -> text) written under ``folder``, and a token of ``project`` for the
    client that runs them against ``live``."""
    from parity.services.projects import upload_token_create

    live.token = upload_token_create(project=project)
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


@pytest.fixture
def suite(tmp_path, live, project):
    return suite_written(tmp_path, live, project, SUITE)


def test_each_file_that_gave_no_result_says_why(live, project, suite):
    every = manifest_file(suite, SUITE)
    reference = ci(
        live, project, suite, "cpu", "run", "--manifest", every, "--commit", COMMIT,
        "--run", "cpu-1", "--complete", "--wait", "--", *PYTEST,
    )  # fmt: skip
    assert reference.returncode == 0, reference.stderr
    current_run_is(project, "cpu", "cpu-1")

    # tpu's job is told to run every file (the server's list), but its shard runs only four:
    # the other two are a lost shard's, which the job's expected-files list names.
    listed = ci(live, project, suite, "tpu", "files", "--shard", "1/1")
    assert listed.stdout.split() == sorted(SUITE), listed.stderr
    (suite / "expected.txt").write_text(listed.stdout)
    shard = ci(
        live, project, suite, "tpu", "run", "--manifest", manifest_file(suite, RAN_ON_TPU),
        "--timeout", "15", "--commit", COMMIT, "--run", "tpu-1", "--ci-url", CI_URL,
        "--", *PYTEST,
    )  # fmt: skip
    assert shard.returncode == 0, shard.stderr
    assert "test/test_segv.py: killed by SIGSEGV" in shard.stderr
    assert "test/test_slow.py: timed out after" in shard.stderr
    done = ci(
        live, project, suite, "tpu", "upload", "--expected-files", str(suite / "expected.txt"),
        "--commit", COMMIT, "--run", "tpu-1", "--complete", "--wait",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    current_run_is(project, "tpu", "tpu-1")

    gaps = Gap.objects.filter(backend__name="tpu", is_open=True)
    assert dict(gaps.values_list("test__key", "state")) == {
        "test/test_segv.py::test_before": "crashed",
        "test/test_segv.py::test_crash": "crashed",
        "test/test_slow.py::test_sleeps": "timed_out",
        "test/test_empty.py::test_here": "empty",
        "test/test_lost_a.py::test_a": "not_run",
        "test/test_lost_b.py::test_b": "not_run",
    }
    # The verdict (printed by the upload) names each file to rerun, the upload (no --shard
    # named a shard) that reported it and how it ended, with the CI run (docs/run-health.md).
    files = done.stdout[done.stdout.index("FILE  ") : done.stdout.index("dashboard:")]
    run = Run.objects.get(project=project, backend__name="tpu", key="tpu-1")
    by = {f.file: ["upload", str(f.upload_id)] for f in RunFile.objects.filter(run=run)}
    assert [line.split() for line in files.splitlines()] == [
        ["FILE", "STATE", "SHARD", "HOW", "IT", "ENDED"],
        ["test/test_empty.py", "empty", *by["test/test_empty.py"], "exit", "5"],
        ["test/test_lost_a.py", "not_run", *by["test/test_lost_a.py"], "not", "started"],
        ["test/test_lost_b.py", "not_run", *by["test/test_lost_b.py"], "not", "started"],
        ["test/test_segv.py", "crashed", *by["test/test_segv.py"], "SIGSEGV"],
        ["test/test_slow.py", "timed_out", *by["test/test_slow.py"], "timed", "out"],
        ["CI", "run:", CI_URL],
    ]
