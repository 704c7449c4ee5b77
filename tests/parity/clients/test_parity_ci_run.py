"""``parity_ci.py run``'s own part, without a server: each test file in its own process, and
the run manifest entry it writes for it, read back by the server's parser as the state its
tests get (a segfault, a timeout, a file of no tests, a file that ran)."""

import subprocess
import sys
from pathlib import Path

import parity_ci
import pytest

from parity.pure.run_manifest import file_state, manifest_parse
from tests.parity.clients.conftest import CLIENTS_DIR

SUITE = {
    "test_ok.py": "def test_one():\n    pass\n\ndef test_two():\n    assert False\n",
    "test_segv.py": (
        "import os, signal\n\ndef test_crash():\n    os.kill(os.getpid(), signal.SIGSEGV)\n"
    ),
    "test_slow.py": "import time\n\ndef test_sleeps():\n    time.sleep(120)\n",
    "test_empty.py": "# no tests here\n",
}
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
TIMEOUT = 10  # seconds: well past a small file's run on a busy machine


@pytest.fixture
def suite(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # this repo's plugins: slow

    for name, text in SUITE.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_each_file_runs_alone_and_its_entry_says_how_it_ended(suite, monkeypatch):
    monkeypatch.chdir(suite)
    logged: list[str] = []
    entries = parity_ci.run_files(
        list(SUITE),
        [*PYTEST, "{file}", "--junitxml={junit}"],
        reports=suite / "reports",
        timeout=TIMEOUT,
        log=logged.append,
    )
    by_file = {entry["file"]: entry for entry in entries}

    ok, segv, slow, empty = (by_file[name] for name in SUITE)
    assert (ok["exit_code"], ok["signal"], ok["report"], ok["tests"]) == (1, "", True, 2)
    assert (segv["exit_code"], segv["signal"], segv["report"]) == (None, "SIGSEGV", False)
    assert slow["timed_out"] and not slow["report"] and TIMEOUT <= slow["duration"] < 60
    assert (empty["exit_code"], empty["report"], empty["tests"]) == (5, True, 0)
    # A line before each file's own output and one after it, saying how it ended.
    assert logged[::2] == [f"[{n}/4] {name}: starting" for n, name in enumerate(SUITE, start=1)]
    assert "killed by SIGSEGV" in logged[3] and "timed out" in logged[5]

    # What the server makes of them: a finished file's absent tests stay "missing".
    states = {e.file: file_state(e) for e in manifest_parse({"files": entries})}
    assert states == {
        "test_ok.py": "ran",
        "test_segv.py": "crashed",
        "test_slow.py": "timed_out",
        "test_empty.py": "empty",
    }


def test_a_report_left_by_an_earlier_run_is_not_taken_for_this_ones(suite, monkeypatch):
    monkeypatch.chdir(suite)
    reports = suite / "reports"
    command = [*PYTEST, "{file}", "--junitxml={junit}"]
    parity_ci.run_files(["test_ok.py"], command, reports=reports, log=lambda _: None)
    (suite / "test_ok.py").write_text(SUITE["test_segv.py"])

    [entry] = parity_ci.run_files(["test_ok.py"], command, reports=reports, log=lambda _: None)
    assert (entry["signal"], entry["report"], entry["tests"]) == ("SIGSEGV", False, None)


def test_placeholders_are_filled_in_every_argument():
    filled = parity_ci.fill_command(
        ["python", "{file}", "--junitxml={junit}", "-k", "x"], file="t/a.py", junit="r/1.xml"
    )
    assert filled == ["python", "t/a.py", "--junitxml=r/1.xml", "-k", "x"]


def test_expected_files_are_listed_once_as_never_started(tmp_path):
    listed = tmp_path / "shard.txt"
    listed.write_text("test/a.py\n\n# a comment\ntest/b.py\ntest/a.py\n")
    manifest = parity_ci.expected_manifest(parity_ci.expected_files_read(str(listed)))
    assert manifest == {
        "files": [{"file": "test/a.py", "started": False}, {"file": "test/b.py", "started": False}]
    }
    assert {file_state(e) for e in manifest_parse(manifest)} == {"not_run"}


def test_a_command_that_does_not_exist_is_named(tmp_path):
    with pytest.raises(parity_ci.ConfigError, match="cannot run 'no-such-runner'"):
        parity_ci.run_files(["a.py"], ["no-such-runner", "{file}"], reports=tmp_path)


def test_run_without_a_file_placeholder_is_refused(tmp_path):
    code = parity_ci.main(
        ["run", "--backend", "tpu", "--url", "http://127.0.0.1:9", "--", "pytest", "-q"],
        env={},
    )
    assert code == parity_ci.EXIT_USAGE


# --- The runners' own entries (JSON Lines, read by upload --run-manifest) -------------------


def runner_env(monkeypatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(CLIENTS_DIR))
    for name in ("PARITY_BACKEND", "PARITY_URL", "PARITY_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def read_states(manifest: Path) -> dict[str, tuple[str, int | None]]:
    entries = manifest_parse(parity_ci.run_manifest_read([str(manifest)]))
    return {e.file: (file_state(e), e.tests) for e in entries}


def test_the_pytest_plugin_writes_each_files_start_and_end(suite, monkeypatch):
    runner_env(monkeypatch)
    monkeypatch.chdir(suite)
    manifest = suite / "run.jsonl"
    plugin = ["-p", "parity_pytest", "--parity-run-manifest", str(manifest)]
    done = subprocess.run(
        [*PYTEST, *plugin, "test_ok.py", "test_empty.py", "--junitxml=r1.xml"], check=False
    )
    assert done.returncode == 1  # test_two fails
    assert read_states(manifest) == {"test_ok.py": ("ran", 2)}  # nothing collected: not listed

    # A segfault ends the session before its end: every file it collected reads crashed.
    manifest.unlink()
    done = subprocess.run(
        [*PYTEST, *plugin, "test_ok.py", "test_segv.py", "--junitxml=r2.xml"], check=False
    )
    assert done.returncode < 0 and not (suite / "r2.xml").exists()
    assert read_states(manifest) == {
        "test_ok.py": ("crashed", None),
        "test_segv.py": ("crashed", None),
    }


def test_the_unittest_runner_writes_each_scripts_start_and_end(suite, monkeypatch):
    runner_env(monkeypatch)
    monkeypatch.chdir(suite)
    (suite / "test_unit.py").write_text(
        "import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n"
    )
    (suite / "test_abort.py").write_text("import os\nos.abort()\n")
    manifest = suite / "run.jsonl"
    runner = [sys.executable, "-m", "parity_unittest", "--run-manifest", str(manifest)]
    assert (
        subprocess.run([*runner, "test_unit.py", "--junit-xml", "u.xml"], check=False).returncode
        == 0
    )
    assert (
        subprocess.run([*runner, "test_abort.py", "--junit-xml", "a.xml"], check=False).returncode
        < 0
    )
    states = read_states(manifest)
    assert states == {"test_unit.py": ("ran", 1), "test_abort.py": ("crashed", None)}

    # upload --run-manifest sends them with --expected-files' list, started entries winning.
    expected = parity_ci.run_manifest_read([str(manifest)], expected=["test_unit.py", "lost.py"])
    assert [(e["file"], e["started"]) for e in expected["files"]] == [
        ("test_unit.py", True),
        ("lost.py", False),
        ("test_abort.py", True),
    ]


# --- The verdict's files without a result ---------------------------------------------------

UNRUN_VERDICT = {
    "run": 7,
    "backend": "tpu",
    "ok": False,
    "opened": {"tracked": 0, "untracked": 2, "intended": 0},
    "closed": 0,
    "complete": True,
    "gaps": [],
    "ci_url": "https://ci.example.org/runs/7",
    "unrun_files": [
        {"file": "test/test_segv.py", "state": "crashed", "status": "SIGSEGV", "tests": None},
        {"file": "test/test_lost.py", "state": "not_run", "status": "not started", "tests": None},
    ],
}


def test_the_verdict_names_each_unrun_file_how_it_ended_and_the_ci_run():
    lines = [line.split() for line in parity_ci.verdict_files(UNRUN_VERDICT).splitlines()]
    assert lines == [
        ["FILE", "STATE", "HOW", "IT", "ENDED"],
        ["test/test_segv.py", "crashed", "SIGSEGV"],
        ["test/test_lost.py", "not_run", "not", "started"],
        ["CI", "run:", "https://ci.example.org/runs/7"],
    ]
    assert parity_ci.verdict_files({**UNRUN_VERDICT, "unrun_files": []}) == ""

    client = parity_ci.Client("https://parity.example.org", project="pytorch-xla")
    markdown = parity_ci.verdict_markdown(UNRUN_VERDICT, client=client)
    assert (
        "| test/test\\_segv.py | crashed | [SIGSEGV](https://ci.example.org/runs/7) |" in markdown
    )
    assert "| test/test\\_lost.py | not_run | [not started](https://ci.example.org/runs/7) |" in (
        markdown
    )
