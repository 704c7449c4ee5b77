"""The README's sharded command on the live stack (issue 45 #5): four jobs each run
``parity_ci.py run --backend tpu --shard I/4 … --complete --wait --gate``, all at once or one
after the other in any order, while another run of tpu completes between them and moves the
durations the split is weighed by. Every file runs exactly once, every shard's gate passes
(each judges its own files while the run is open), the run completes once, when its last shard
arrives, and leaves no gap on the dashboard."""

import json
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from parity.clients.parity_ci import shard_files
from parity.models import BackendState, Gap, Run, RunFile, RunSplit
from tests.e2e.stack import wait_for
from tests.e2e.test_run_manifest import current_run_is, manifest_file, suite_written
from tests.junit_builder import Case, junit_xml
from tests.parity.clients.conftest import clean_environment, client_run

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# Ten files of one test each; each records that it ran (on tpu) in the file RAN_LOG names.
FILES = [f"test/test_{name}.py" for name in "abcdefghij"]
BODY = (
    "import os\n\n"
    "if os.environ['BACKEND'] == 'tpu':\n"
    "    with open(os.environ['RAN_LOG'], 'a') as log:\n"
    "        log.write(__name__ + '\\n')\n\n"
    "def test_one():\n    pass\n"
)
PYTEST = [sys.executable, "-m", "pytest", "{file}", "--junitxml={junit}", "-q"]
COMMIT = "e" * 40
KEY = "ci-41-tpu"


def ci(live, project, suite, backend: str, *args: str):
    """``parity_ci.py ARGS`` as a CI job of ``backend`` runs it in ``suite``."""
    env = clean_environment(
        PARITY_URL=live.base_url,
        PARITY_PROJECT=project.slug,
        PARITY_TOKEN=live.token,
        BACKEND=backend,
        PARITY_BACKEND=backend,
        RAN_LOG=str(suite / "ran.log"),
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",  # this repository's plugins: slow to load
        PYTHONDONTWRITEBYTECODE="1",
    )
    return client_run(*args, env=env, cwd=suite)


def _shard(live, project, suite, index: int):
    return ci(
        live, project, suite, "tpu", "run", "--shard", f"{index}/4", "--commit", COMMIT,
        "--run", KEY, "--complete", "--wait", "--gate", "--", *PYTEST,
    )  # fmt: skip


def _other_run(live, project, suite, files: list[str], *, complete: bool) -> None:
    """Another CI run's job of tpu uploads ``files``, their durations reversed (the files the
    split put first now weigh least); ``complete``: its last job, which completes it."""
    cases = [
        Case(f"test.test_{f[10]}", "test_one", file=f, seconds=100.0 * (FILES.index(f) + 1))
        for f in files
    ]
    (suite / "other.xml").write_bytes(junit_xml(*cases))
    other = ci(
        live, project, suite, "tpu", "upload", str(suite / "other.xml"), "--commit", "f" * 40,
        "--run", "ci-40-tpu", "--wait", *(["--complete"] if complete else []),
    )  # fmt: skip
    assert other.returncode == 0, other.stderr


@pytest.fixture
def suite(tmp_path, live, project):
    folder = suite_written(tmp_path, live, project, {f: BODY for f in FILES})
    every = manifest_file(folder, FILES)
    for backend, key, commit in (("cpu", "cpu-1", "c" * 40), ("tpu", "tpu-0", "d" * 40)):
        done = ci(
            live, project, folder, backend, "run", "--manifest", every, "--commit", commit,
            "--run", key, "--complete", "--wait", "--", *PYTEST,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        current_run_is(project, backend, key)
    (folder / "ran.log").write_text("")
    return folder


@pytest.mark.parametrize("mode", ["concurrently", "one after the other"])
def test_four_shards_run_every_file_once_and_complete_the_run_once(live, project, suite, mode):
    if mode == "concurrently":
        with ThreadPoolExecutor(max_workers=4) as pool:
            jobs = {i: pool.submit(_shard, live, project, suite, i) for i in (2, 4, 1, 3)}
        done = {i: job.result() for i, job in jobs.items()}
    else:
        # Another CI run of tpu started before this one, and completes between shard 3 and the
        # rest: it becomes current, and without a split fixed for the run key the other shards
        # would split the list by its durations.
        _other_run(live, project, suite, FILES[:5], complete=False)
        done = {3: _shard(live, project, suite, 3)}
        _other_run(live, project, suite, FILES[5:], complete=True)
        current_run_is(project, "tpu", "ci-40-tpu")
        for index in (1, 4, 2):
            done[index] = _shard(live, project, suite, index)

    for index, job in done.items():
        assert job.returncode == 0, f"shard {index}/4 failed its gate:\n{job.stdout}{job.stderr}"
    ran = Counter((suite / "ran.log").read_text().split())
    assert sorted(ran) == sorted(f"test_{f[10]}" for f in FILES), ran
    assert set(ran.values()) == {1}, f"files ran more than once: {ran}"

    run = Run.objects.get(project=project, backend__name="tpu", key=KEY)
    assert run.complete
    current_run_is(project, "tpu", KEY)
    completions = live.log_since_mark(live.worker).count(f"run {run.pk} complete")
    assert completions == 1, f"the run completed {completions} times"
    shards = Counter(RunFile.objects.filter(run=run).values_list("upload__shard", flat=True))
    assert shards.total() == len(FILES) and set(shards) == {"1/4", "2/4", "3/4", "4/4"}
    wait_for(
        lambda: BackendState.objects.filter(backend=run.backend, current_run=run).exists(),
        seconds=60,
        what="the run to become current",
    )
    assert not Gap.objects.filter(backend__name="tpu", is_open=True).exists()
    if mode == "one after the other":
        # Each shard before the last judged its own files; the last one, the whole run. Run
        # concurrently, the run may complete before any shard asks, so no count is certain.
        scoped = [i for i, j in done.items() if "judges the shard's" in j.stdout]
        assert sorted(scoped) == [1, 3, 4], scoped
    assert RunSplit.objects.filter(key=KEY).count() == 1

    if mode == "one after the other":
        # The split the shards ran is not the one the moved durations give today.
        manifest = json.loads(ci(live, project, suite, "tpu", "manifest").stdout)
        pinned = RunSplit.objects.get(key=KEY)
        live_split = [shard_files(manifest, f"{i}/4") for i in (1, 2, 3, 4)]
        basis = {"files": pinned.files, "durations": pinned.durations}
        fixed = [shard_files(basis, f"{i}/4") for i in (1, 2, 3, 4)]
        assert live_split != fixed
