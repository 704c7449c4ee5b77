"""The CI client's own logic, without a server: shards balanced by duration, where a CI run's
commit and branch come from, the archive it sends, the verdict as a table and as Markdown, and
that it runs on Python 3.8."""

import ast
import gzip
import io
import json
import os
import random
import re
import shlex
import socket
import subprocess
import tarfile
from pathlib import Path

import parity_ci
import pytest
import yaml

import parity
from tests.conftest import FIXTURES_DIR
from tests.parity.clients.conftest import CLIENTS_DIR, clean_environment, client_run, python38

DEMO_FIXTURE = Path(parity_ci.__file__).resolve().parents[1] / "demo" / "fixture.json"


# --- Shards ---------------------------------------------------------------------------------


def realistic_durations(seed: int) -> tuple[list[str], dict[str, float]]:
    """PyTorch/XLA's real test files (from the demo fixture) with durations drawn as CI sees
    them: log-normal, a median of 30 s and a long tail (a few files take ten times that), and
    one file in ten with no history yet."""
    files = sorted(json.loads(DEMO_FIXTURE.read_text())["files"])
    rng = random.Random(seed)
    durations = {f: round(rng.lognormvariate(3.4, 1.0), 3) for f in files if rng.random() > 0.1}
    return files, durations


def loads(shards: list[list[str]], weight: dict[str, float]) -> list[float]:
    return [sum(weight[f] for f in shard) for shard in shards]


@pytest.mark.parametrize("count", [2, 4, 8])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_shards_are_balanced_within_a_fifth_of_the_ideal(seed, count):
    files, durations = realistic_durations(seed)
    median = sorted(durations.values())[len(durations) // 2]
    weight = {f: durations.get(f, median) for f in files}

    shards = parity_ci.split_into_shards(files, durations, count)

    assert sorted(f for shard in shards for f in shard) == files  # each file exactly once
    ideal = sum(weight.values()) / count
    assert max(weight.values()) < ideal  # a mix where balance is possible at all
    assert max(loads(shards, weight)) <= 1.2 * ideal, (loads(shards, weight), ideal)


def test_shards_are_the_same_whatever_the_order_of_the_input():
    files, durations = realistic_durations(seed=7)
    shuffled = files[:]
    random.Random(0).shuffle(shuffled)
    reordered = dict(sorted(durations.items(), reverse=True))

    first = parity_ci.split_into_shards(files, durations, 4)

    assert parity_ci.split_into_shards(shuffled, reordered, 4) == first
    assert all(shard == sorted(shard) for shard in first)


def test_files_without_history_count_as_the_median_of_the_known_ones():
    durations = {"a.py": 10.0, "b.py": 30.0}

    shards = parity_ci.split_into_shards(["a.py", "b.py", "c.py", "d.py"], durations, 2)

    # b (30) and a (10) against c and d at 20 each; at 1 s each they would join a.
    assert shards == [["a.py", "b.py"], ["c.py", "d.py"]]


def test_with_no_history_at_all_files_are_dealt_evenly_by_name():
    shards = parity_ci.split_into_shards([f"t{n}.py" for n in range(7)], {}, 3)

    assert shards == [["t0.py", "t3.py", "t6.py"], ["t1.py", "t4.py"], ["t2.py", "t5.py"]]


def test_a_file_longer_than_a_fair_share_gets_a_shard_to_itself():
    durations = {"huge.py": 100.0, **{f"small{n}.py": 5.0 for n in range(10)}}

    shards = parity_ci.split_into_shards(sorted(durations), durations, 3)

    assert ["huge.py"] in shards
    assert sorted(len(shard) for shard in shards) == [1, 5, 5]


def test_files_a_run_timed_at_zero_seconds_spread_over_every_shard():
    # pytest writes time="0.000" for a file of trivial tests; every one of them used to go to
    # shard 1, and the other shards, with nothing to run, failed their upload.
    durations = {f"t{n}.py": 0.0 for n in range(10)}

    shards = parity_ci.split_into_shards(sorted(durations), durations, 4)

    assert sorted(len(shard) for shard in shards) == [2, 2, 3, 3]


def test_more_shards_than_files_leaves_some_empty():
    assert parity_ci.split_into_shards(["a.py"], {}, 3) == [["a.py"], [], []]


@pytest.mark.parametrize("text", ["0/4", "5/4", "2", "a/b", "1/0"])
def test_a_bad_shard_is_refused_with_the_form_it_takes(text):
    with pytest.raises(parity_ci.ConfigError, match="--shard"):
        parity_ci.parse_shard(text)


# --- Where a run comes from -----------------------------------------------------------------


def test_github_actions_push():
    env = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_SHA": "a" * 40,
        "GITHUB_REF_NAME": "master",
        "GITHUB_RUN_ID": "123",
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "pytorch/xla",
        "GITHUB_EVENT_NAME": "push",
    }

    assert parity_ci.ci_environment(env) == {
        "commit": "a" * 40,
        "branch": "master",
        "run": "123",
        "ci_url": "https://github.com/pytorch/xla/actions/runs/123",
    }


def test_github_actions_pull_request_names_the_branch_and_its_commit(tmp_path):
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"head": {"sha": "b" * 40}}}))
    env = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_SHA": "m" * 40,  # the merge commit GitHub made
        "GITHUB_REF_NAME": "9001/merge",
        "GITHUB_HEAD_REF": "fix-sort",
        "GITHUB_RUN_ID": "124",
        "GITHUB_REPOSITORY": "pytorch/xla",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
    }

    found = parity_ci.ci_environment(env)

    assert (found["commit"], found["branch"]) == ("b" * 40, "fix-sort")


def test_gitlab_ci_merge_request():
    env = {
        "GITLAB_CI": "true",
        "CI_COMMIT_SHA": "c" * 40,
        "CI_COMMIT_REF_NAME": "fix-sort",
        "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "fix-sort",
        "CI_PIPELINE_ID": "77",
        "CI_PIPELINE_URL": "https://gitlab.example.org/xla/-/pipelines/77",
    }

    assert parity_ci.ci_environment(env) == {
        "commit": "c" * 40,
        "branch": "fix-sort",
        "run": "77",
        "ci_url": "https://gitlab.example.org/xla/-/pipelines/77",
    }


def test_buildkite():
    env = {
        "BUILDKITE": "true",
        "BUILDKITE_COMMIT": "d" * 40,
        "BUILDKITE_BRANCH": "main",
        "BUILDKITE_BUILD_ID": "0190-uuid",
        "BUILDKITE_BUILD_URL": "https://buildkite.com/org/xla/builds/5",
    }

    assert parity_ci.ci_environment(env) == {
        "commit": "d" * 40,
        "branch": "main",
        "run": "0190-uuid",
        "ci_url": "https://buildkite.com/org/xla/builds/5",
    }


def test_outside_ci_nothing_is_guessed_from_the_environment():
    assert set(parity_ci.ci_environment({"CI": "true"}).values()) == {""}


# --- What is sent ---------------------------------------------------------------------------


def reports_folder(root: Path) -> Path:
    """A test-reports folder as xmlrunner writes it: one folder per test module."""
    folder = root / "test-reports"
    for module in ("test.test_ops", "test.test_nn"):
        (folder / "python-unittest" / module).mkdir(parents=True)
        (folder / "python-unittest" / module / "TEST-x.xml").write_bytes(
            (FIXTURES_DIR / "junit" / "pytest_small.xml").read_bytes()
        )
    (folder / "python-unittest" / "test.test_nn" / "notes.txt").write_text("not a report")
    return folder


def test_a_folder_is_sent_with_its_folder_names(tmp_path):
    folder = reports_folder(tmp_path)

    reports = parity_ci.collect_reports([str(folder)])

    assert [name for _, name in reports.xml] == [
        "test-reports/python-unittest/test.test_nn/TEST-x.xml",
        "test-reports/python-unittest/test.test_ops/TEST-x.xml",
    ]


def test_a_file_given_alone_keeps_its_folder_name_and_is_sent_once(tmp_path):
    folder = reports_folder(tmp_path)
    report = folder / "python-unittest" / "test.test_ops" / "TEST-x.xml"

    reports = parity_ci.collect_reports([str(report), str(folder)])

    names = [name for _, name in reports.xml]
    assert names[0] == "test.test_ops/TEST-x.xml"
    assert len(names) == 2


def test_what_the_runner_applied_is_read_from_the_reports_properties(tmp_path):
    (tmp_path / "plain.xml").write_text('<testsuites><testsuite name="a"/></testsuites>')
    (tmp_path / "probe.xml").write_text(
        '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest"><properties>'
        '<property name="parity_exemptions_version" value="4bc4abd8fbf0e91d" />'
        '<property name="parity_probe" value="true" /></properties></testsuite></testsuites>'
    )
    request = parity_ci.UploadRequest(backend="tpu", commit="f" * 40)
    logged = []

    parity_ci.request_from_reports(
        request, parity_ci.collect_reports([str(tmp_path)]), logged.append
    )

    assert (request.probe, request.exemptions_version) == (True, "4bc4abd8fbf0e91d")
    assert request.fields(project="p", complete=True)["probe"] == "true"
    assert logged == [
        "the reports come from a probe (exempted tests ran): uploading them as a probe run"
    ]
    # A flag given wins over the reports; a plain report makes no probe.
    flagged = parity_ci.UploadRequest(backend="tpu", commit="f", exemptions_version="given")
    plain = parity_ci.collect_reports([str(tmp_path / "plain.xml")])
    parity_ci.request_from_reports(flagged, plain, logged.append)
    assert (flagged.probe, flagged.exemptions_version) == (False, "given")
    assert "probe" not in flagged.fields(project="p", complete=True)


def test_the_archive_is_the_same_bytes_for_the_same_files(tmp_path):
    members = parity_ci.collect_reports([str(reports_folder(tmp_path))]).xml
    first = io.BytesIO()
    parity_ci.write_tar_gz(members, first)
    for path, _ in members:  # a later CI step touches the files: nothing inside changes
        os.utime(path, (1, 1))
    second = io.BytesIO()
    parity_ci.write_tar_gz(members, second)

    assert first.getvalue() == second.getvalue()
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(first.getvalue()))) as tar:
        assert [m.name for m in tar.getmembers()] == [name for _, name in members]
        assert {m.mtime for m in tar.getmembers()} == {0}


def test_uploads_larger_than_a_part_are_split(tmp_path):
    folder = reports_folder(tmp_path)
    reports = parity_ci.collect_reports([str(folder)])
    size = max(path.stat().st_size for path, _ in reports.xml)

    assert len(parity_ci.upload_parts(reports, part_bytes=size)) == 2
    assert len(parity_ci.upload_parts(reports, part_bytes=2 * size)) == 1


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda root: root / "absent", "no such file or folder"),
        (lambda root: root, "no .xml files under"),
        (lambda root: _write(root / "log.txt", "text"), "is not an .xml"),
    ],
)
def test_nothing_to_upload_says_why(tmp_path, make, message):
    with pytest.raises(parity_ci.ConfigError, match=message):
        parity_ci.collect_reports([str(make(tmp_path))])


def test_the_client_says_the_version_of_the_server_and_wheel_it_comes_with():
    done = client_run("--version", env=clean_environment())

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"parity_ci {parity.__version__}"


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# --- The verdict ----------------------------------------------------------------------------

VERDICT = {
    "run": 41,
    "backend": "tpu",
    "ok": False,
    "opened": {"tracked": 1, "untracked": 1, "intended": 0},
    "closed": 2,
    "complete": True,
    "baseline_run": 40,
    "coverage_drop": False,
    "test_count": 1200,
    "baseline_test_count": 1190,
    "gaps": [
        {
            "test": "test/test_ops.py::TestOps::test_sort",
            "backend": "tpu",
            "state": "skipped",
            "reason": "sort is not lowered",
            "issues": ["https://github.com/pytorch/xla/issues/4298"],
            "triage": None,
            "tracked": True,
            "intended": False,
        },
        {
            "test": "test/test_ops.py::TestOps::test_div[a|b]",
            "backend": "tpu",
            "state": "failed",
            "reason": None,
            "issues": [],
            "triage": None,
            "tracked": False,
            "intended": False,
        },
    ],
}


def test_the_table_lists_untracked_gaps_first():
    lines = parity_ci.verdict_table(VERDICT).splitlines()

    assert lines[0].split() == ["STATE", "TRACKING", "TEST", "REASON", "ISSUES"]
    assert lines[1].split()[:3] == [
        "failed",
        "untracked",
        "test/test_ops.py::TestOps::test_div[a|b]",
    ]
    assert lines[2].split()[-1] == "https://github.com/pytorch/xla/issues/4298"
    assert "NOT OK (opens untracked gaps)" in parity_ci.verdict_headline(VERDICT)


def test_a_test_name_with_a_line_break_stays_on_its_row():
    # A name from the XML ("&#10;" in its attribute) must not start a line a CI log reads as a
    # command: GitHub runs any line starting "::error::" (or "::add-mask::", ...).
    gap = {**VERDICT["gaps"][1], "test": "test/x.py::T::test_a\n::error::owned\r\n::x::"}
    gap["issues"] = ["https://x.org/1\n::warning::too"]
    verdict = {**VERDICT, "gaps": [gap]}

    lines = parity_ci.verdict_table(verdict).splitlines()

    assert len(lines) == 2
    assert not any(line.startswith("::") for line in lines)
    assert "test/x.py::T::test_a\\n::error::owned\\r\\n::x::" in lines[1]


def test_in_github_actions_the_verdict_is_printed_with_commands_stopped(capsys):
    resume = parity_ci._commands_stopped({"GITHUB_ACTIONS": "true"})
    stop = capsys.readouterr().out.strip()
    token = stop.removeprefix("::stop-commands::")
    assert stop.startswith("::stop-commands::") and len(token) == 32
    assert resume == f"::{token}::"
    assert parity_ci._commands_stopped({}) == "" and capsys.readouterr().out == ""


def test_a_gap_tracked_only_by_closed_issues_says_so():
    gap = {**VERDICT["gaps"][0], "tracked_closed": True}
    verdict = {**VERDICT, "opened": {**VERDICT["opened"], "tracked_closed": 1}, "gaps": [gap]}

    assert parity_ci.verdict_table(verdict).splitlines()[1].split()[:2] == [
        "skipped",
        "tracked-closed",
    ]
    assert "1 tracked (1 by closed issues)" in parity_ci.verdict_headline(verdict)


def test_markdown_links_the_dashboard_and_keeps_table_cells_whole():
    client = parity_ci.Client("https://parity.example.org", project="pytorch-xla")
    parity = {"backends": [{"backend": "cpu", "is_reference": True, "score": 1.0, "run": 39}]}

    markdown = parity_ci.verdict_markdown(VERDICT, client=client, parity=parity, commit="f" * 40)

    assert "### parity: tpu run 41: ❌ not ok" in markdown
    assert "| cpu (reference) | 100.0% | 39 |" in markdown
    rows = [line for line in markdown.splitlines() if line.startswith(("| failed", "| skipped"))]
    assert rows[0].startswith(
        "| failed | untracked | [test/test\\_ops.py::TestOps::test\\_div\\[a\\|b\\]]"
    )
    assert all(row.replace("\\|", "").count("|") == 6 for row in rows)  # five cells each
    assert (
        "https://parity.example.org/p/pytorch-xla/file/?path=test%2Ftest_ops.py&backend=tpu"
        in markdown
    )
    assert "[#4298](https://github.com/pytorch/xla/issues/4298)" in markdown
    assert (
        "https://parity.example.org/p/pytorch-xla/gaps/?backend=tpu&tracked=untracked&open=1"
        in markdown
    )
    assert "https://parity.example.org/p/pytorch-xla/exemptions/?backend=tpu" in markdown
    assert "[run 41](https://parity.example.org/p/pytorch-xla/runs/41/)" in markdown


def test_markdown_links_each_test_to_its_page_when_the_verdict_names_its_id():
    client = parity_ci.Client("https://parity.example.org", project="pytorch-xla")
    gaps = [{**gap, "test_id": 7 + n} for n, gap in enumerate(VERDICT["gaps"])]

    markdown = parity_ci.verdict_markdown({**VERDICT, "gaps": gaps}, client=client)

    for gap in gaps:
        assert f"](https://parity.example.org/p/pytorch-xla/tests/{gap['test_id']}/)" in markdown
    assert "/file/?path=" not in markdown


def test_a_verdict_listing_a_page_of_its_gaps_says_how_many_more_and_counts_them_all():
    """A first run opens tens of thousands of gaps; the server lists a page of them. The
    headline counts every gap; the table and the Markdown say how many they leave out."""
    client = parity_ci.Client("https://parity.example.org", project="pytorch-xla")
    gap = VERDICT["gaps"][1]
    page = [{**gap, "test": f"{gap['test']}_{n:03}"} for n in range(300)]
    verdict = {
        **VERDICT,
        "opened": {"tracked": 0, "untracked": 52_761, "intended": 0},
        "gaps": page,
        "gaps_total": 52_761,
    }

    assert "NOT OK (opens untracked gaps); opened 52761 untracked" in (
        parity_ci.verdict_headline(verdict)
    )
    lines = parity_ci.verdict_table(verdict).splitlines()
    assert len(lines) == 1 + 300 + 1
    assert lines[-1].startswith("... and 52,461 more: 52,761 new gaps, the first 300 listed")
    markdown = parity_ci.verdict_markdown(verdict, client=client)
    assert len([line for line in markdown.splitlines() if line.startswith("| failed")]) == 200
    assert "… and 52,561 more on [run 41](https://parity.example.org/p/pytorch-xla/runs/41/)." in (
        markdown
    )


def test_a_verdict_from_a_server_that_lists_every_gap_says_no_more():
    """An older server sends no gaps_total: its list is every gap."""
    assert not any(line.startswith("...") for line in parity_ci.verdict_table(VERDICT).splitlines())
    assert parity_ci.gaps_total(VERDICT) == 2


def test_a_run_on_a_branch_the_project_does_not_compare_is_named_in_the_markdown_too():
    client = parity_ci.Client("https://parity.example.org", project="pytorch-xla")
    off = {**VERDICT, "branch": "master", "default_branch": "main", "counts_toward_parity": False}

    markdown = parity_ci.verdict_markdown(off, client=client)

    assert "**Warning: this run is on branch master; pytorch-xla compares main: " in markdown
    assert "this run is on branch" not in parity_ci.verdict_markdown(VERDICT, client=client)
    assert parity_ci.verdict_branch(VERDICT, project="pytorch-xla") == ""  # an older server


# --- Settings and the server's absence -------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_an_unreachable_server_is_named_in_one_line_with_its_own_exit_code():
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there any more
    env = clean_environment(PARITY_URL=url, PARITY_PROJECT="pytorch-xla")

    done = client_run("files", "--backend", "tpu", "--retries", "1", env=env)

    assert done.returncode == parity_ci.EXIT_UNREACHABLE, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"parity: cannot reach {url} (")
    assert "after 2 attempt(s)" in last
    assert "retrying in" in done.stderr  # it did retry once


def test_missing_settings_are_named():
    done = client_run("files", "--backend", "tpu", env=clean_environment())

    assert done.returncode == parity_ci.EXIT_USAGE
    assert done.stderr.strip() == (
        "parity: set PARITY_URL (or --url) to the parity server, e.g. https://parity.example.org"
    )


# --- Python 3.8 -----------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(CLIENTS_DIR.glob("*.py")), ids=lambda p: p.name)
def test_client_files_parse_as_python_3_8(path):
    ast.parse(path.read_text(encoding="utf-8"), filename=str(path), feature_version=(3, 8))


def test_the_client_runs_on_python_3_8(tmp_path):
    python = python38()
    if python is None:
        pytest.skip("no Python 3.8 here (python3.8, ~/.pyenv/versions/3.8*, PARITY_TEST_PYTHON38)")
    files, durations = realistic_durations(seed=5)
    saved = tmp_path / "manifest.json"
    saved.write_text(json.dumps({"files": files, "durations": durations, "exemptions": []}))

    done = client_run(
        "files", "--manifest", str(saved), "--shard", "2/3", env=clean_environment(), python=python
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == parity_ci.split_into_shards(files, durations, 3)[1]


# --- The README's workflows -----------------------------------------------------------------

DOCS = [
    CLIENTS_DIR.parents[1] / "README.md",
    *sorted((CLIENTS_DIR.parents[1] / "docs").glob("*.md")),
]


def readme_blocks(language: str) -> list[str]:
    """The fenced code blocks in ``language`` of the README and docs/, GitHub's ``${{ … }}``
    expressions replaced by sample values (a shard number, or a backend's name)."""
    text = "\n".join(page.read_text(encoding="utf-8") for page in DOCS)
    blocks = re.findall(rf"```{language}\n(.*?)```", text, re.S)
    return [
        re.sub(r"\$\{\{[^}]*\}\}", "tpu", re.sub(r"\$\{\{ *matrix\.shard *\}\}", "1", block))
        for block in blocks
    ]


def readme_client_commands() -> list[list[str]]:
    """Every ``parity_ci.py <command> …`` of the README's shell and workflow steps, as argv."""
    commands = []
    for block in readme_blocks("sh") + readme_blocks("yaml"):
        for line in block.replace("\\\n", " ").splitlines():
            found = re.search(r"parity_ci\.py +((?:upload|files|manifest)\b[^|;>]*)", line)
            if found:
                commands.append(shlex.split(found.group(1)))
    return commands


def test_the_readme_workflows_are_valid_yaml_and_bash():
    documents = [yaml.safe_load(block) for block in readme_blocks("yaml")]
    workflows = [doc for doc in documents if isinstance(doc, dict) and "jobs" in doc]

    assert len(workflows) >= 2  # pytest's, and a script-style suite's
    for workflow in workflows:
        steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
        assert all(("uses" in step) != ("run" in step) for step in steps), steps
        for script in (step["run"] for step in steps if "run" in step):
            done = subprocess.run(["bash", "-n", "-c", script], capture_output=True, text=True)
            assert done.returncode == 0, f"{script}\n{done.stderr}"


def test_the_readme_calls_the_client_only_with_arguments_it_takes():
    commands = readme_client_commands()
    parser = parity_ci._parser({})

    for argv in commands:
        parser.parse_args(argv)  # exits (and fails the test) on a flag the client lacks
    used = {(argv[0], flag) for argv in commands for flag in argv if flag.startswith("--")}
    assert {("files", "--shard"), ("upload", "--wait"), ("upload", "--gate")} <= used


# --- Suites ---------------------------------------------------------------------------------


def test_the_suite_comes_from_the_flag_then_parity_suite_then_ci_conventions():
    github = {"GITHUB_ACTIONS": "true", "GITHUB_JOB": "test-tpu"}
    pytorch = {**github, "TEST_CONFIG": "distributed"}
    gitlab = {"GITLAB_CI": "true", "CI_JOB_NAME": "neuron nightly"}

    assert parity_ci.run_suite(None, {}) == ""
    assert parity_ci.run_suite(None, github) == "test-tpu"
    assert parity_ci.run_suite(None, pytorch) == "distributed"  # TEST_CONFIG says more
    assert parity_ci.run_suite(None, gitlab) == "neuron nightly"
    assert parity_ci.run_suite(None, {**pytorch, "PARITY_SUITE": "xla_op1"}) == "xla_op1"
    assert parity_ci.run_suite(" main ", pytorch) == "main"


def test_the_suite_goes_with_the_upload_and_not_when_there_is_none():
    args = parity_ci._parser({}).parse_args(
        ["upload", "--backend", "tpu", "--commit", "a" * 40, "--suite", "tpu-tests", "r.xml"]
    )
    request = parity_ci.upload_request(args, {"TEST_CONFIG": "default"})
    assert request.fields(project="p", complete=False)["suite"] == "tpu-tests"
    plain = parity_ci.UploadRequest(backend="tpu", commit="a" * 40)
    assert "suite" not in plain.fields(project="p", complete=False)


# --- Attributes -----------------------------------------------------------------------------


def test_attributes_come_from_ci_conventions_then_parity_variables_then_flags():
    env = {
        "PYTORCH_ROCM_ARCH": "gfx942",
        "ROCM_VERSION": "7.0",
        "CUDA_VERSION": "12.4.1",
        "PARITY_ATTR_ROCM": "7.1",
        "PARITY_ATTR_TORCH_VERSION": "2.9",
        "PARITY_ATTR_EMPTY": " ",
    }

    assert parity_ci.env_attributes(env) == {
        "arch": "gfx942",
        "rocm": "7.1",  # PARITY_ATTR_ROCM over ROCM_VERSION
        "cuda": "12.4.1",
        "torch_version": "2.9",
    }
    flags = ["rocm=7.2", "os=ubuntu-24.04"]
    assert parity_ci.run_attributes(flags, env) == {
        "arch": "gfx942",
        "rocm": "7.2",  # --attr over both
        "cuda": "12.4.1",
        "torch_version": "2.9",
        "os": "ubuntu-24.04",
    }


def test_a_build_for_several_arches_says_nothing_about_the_machine():
    for several in ("gfx90a;gfx942", "gfx90a gfx942", "gfx90a,gfx942"):
        assert parity_ci.env_attributes({"PYTORCH_ROCM_ARCH": several}) == {}


def test_attributes_go_with_the_upload_as_json_and_not_when_there_are_none():
    request = parity_ci.UploadRequest(
        backend="rocm", commit="a" * 40, attributes={"rocm": "7.1", "arch": "gfx942"}
    )
    plain = parity_ci.UploadRequest(backend="rocm", commit="a" * 40)

    fields = request.fields(project="p", complete=False)
    assert json.loads(fields["attributes"]) == {"arch": "gfx942", "rocm": "7.1"}
    assert "attributes" not in plain.fields(project="p", complete=False)
    assert parity_ci.attributes_env({"arch": "gfx942", "torch.v": "2"}) == {
        "PARITY_ATTR_ARCH": "gfx942",
        "PARITY_ATTR_TORCH.V": "2",
    }
    assert parity_ci.env_attributes(parity_ci.attributes_env({"torch.v": "2"})) == {"torch.v": "2"}


@pytest.mark.parametrize("flag", ["arch", "Arch=gfx942", "arch=", "=gfx942"])
def test_a_bad_attr_flag_is_named_before_anything_is_sent(flag):
    done = client_run(
        "files",
        "--backend",
        "rocm",
        "--attr",
        flag,
        env=clean_environment(PARITY_URL="http://127.0.0.1:9"),
    )

    assert done.returncode == parity_ci.EXIT_USAGE, done.stderr
    assert done.stderr.strip().startswith(f"parity: --attr {flag!r}: write key=value")


def test_one_new_gap_is_one_gap():
    one = {**VERDICT, "gaps": [], "gaps_total": 1}

    assert parity_ci.verdict_table(one).splitlines()[0] == "1 new gap (none listed)"
    group = {"tracking": "tracked", "gaps": 1, "exemption": 7, "match": "x", "issues": []}
    assert parity_ci.verdict_table({**one, "exempted": [group]}).splitlines()[0] == (
        "1 new untracked gap (none listed)"
    )


def test_a_verdict_of_informing_suites_reports_and_passes_the_gate():
    """``gates`` false (the run's suites are informing or broken on its backend): the verdict
    says not ok, and CI passes; a server that sends no ``gates`` gates as before."""
    opened = {"untracked": 2, "tracked": 0, "intended": 0}
    base = {"ok": False, "opened": opened, "closed": 0, "gaps": [], "backend": "tpu", "run": 7}
    reporting = {**base, "gates": False, "suites": [{"name": "tpu-tests", "tier": "informing"}]}
    assert parity_ci.verdict_gates(reporting) is True
    assert parity_ci.verdict_gates({**reporting, "gates": True}) is False
    assert parity_ci.verdict_gates(base) is False  # an older server
    headline = parity_ci.verdict_headline(reporting)
    assert "NOT OK [reports only, not a gate: suite tpu-tests informing]" in headline
