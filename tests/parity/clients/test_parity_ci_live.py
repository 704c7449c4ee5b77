"""The CI client run as CI runs it (``python parity/clients/parity_ci.py ...``, a subprocess)
against the live stack: gunicorn and a Celery worker over Redis, on the test database.

Uploads of real and written report folders, a first connection the network spoils, ``--gate``
on an ok and a failing verdict, the Markdown it writes, what a CI's variables fill in, the
files a backend runs (live manifest, shards), and the one-line refusals.
"""

import json
import re
import time
from pathlib import Path
from urllib.parse import urlsplit

import parity_ci
import pytest

from parity.models import BackendState, Run, TestCase, Upload
from tests.conftest import FIXTURES_DIR
from tests.ingest.corpus import corpus_files
from tests.junit_builder import Case, junit_xml
from tests.parity.clients.conftest import client_run, python38
from tests.parity.clients.flaky_proxy import FAULTS, FlakyProxy
from tests.shared_data import CORPUS_DIR, needs_corpus

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SUREFIRE_REPORTS = "maven-surefire/surefire-report-parser/test-reports"
RECOMPUTE_SECONDS = 60
ISSUE = "https://github.com/pytorch/xla/issues/9017"


def commit_of(name: str) -> str:
    return name.encode().hex().ljust(40, "0")[:40]


def write_reports(folder: Path, results: dict[str, str], seconds: float = 0.01) -> Path:
    """A report folder with one JUnit file of ``results`` (canonical test ID -> outcome),
    each test taking ``seconds``."""
    cases = []
    for test_id, outcome in results.items():
        file, cls, name = test_id.split("::")
        message = "" if outcome == "passed" else f"{outcome} here"
        cases.append(Case(cls, name, outcome, message, file=file, seconds=seconds))
    folder.mkdir(parents=True)
    (folder / "TEST-results.xml").write_bytes(junit_xml(*cases))
    return folder


def current_run_wait(live, *, backend: str, run_id: int) -> None:
    """Until the worker has made ``run_id`` its backend's current run (the engine's recompute)."""
    deadline = time.monotonic() + RECOMPUTE_SECONDS
    while not BackendState.objects.filter(backend__name=backend, current_run_id=run_id).exists():
        live.assert_worker_alive()
        assert time.monotonic() < deadline, f"run {run_id} not current after the recompute"
        time.sleep(0.2)


def reference_current(parity_ci_run, live, folder: Path, results: dict[str, str]) -> None:
    """The reference backend (cpu) uploads ``results`` as a complete run, and the worker makes
    it the current run every other backend is compared with."""
    write_reports(folder, results)
    done = parity_ci_run(
        "upload",
        str(folder),
        "--backend",
        "cpu",
        "--commit",
        commit_of("cpu"),
        "--complete",
        "--wait",
    )
    assert_ok(done)
    current_run_wait(live, backend="cpu", run_id=Run.objects.get(backend__name="cpu").pk)


def assert_ok(done) -> None:
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"


# --- Uploads --------------------------------------------------------------------------------


@needs_corpus
def test_a_real_test_reports_folder_is_uploaded_and_ingested(parity_ci_run):
    folder = CORPUS_DIR / SUREFIRE_REPORTS
    expected = [f.expected for f in corpus_files() if f.path.startswith(SUREFIRE_REPORTS + "/")]
    assert len(expected) == len(list(folder.glob("*.xml"))) == 6

    done = parity_ci_run(
        "upload", str(folder), "--backend", "cpu", "--commit", commit_of("a"), "--wait"
    )

    assert_ok(done)
    assert "uploading 6 XML file(s)" in done.stderr
    upload = Upload.objects.get()
    failed, error, skipped = (
        sum(getattr(e, k) for e in expected) for k in ("failed", "error", "skipped")
    )
    total = sum(e.total for e in expected)
    assert upload.counts == {
        "total": total,
        "passed": total - failed - error - skipped,
        "skipped": skipped,
        "failed": failed,
        "error": error,
    }
    assert [f.name for f in upload.files.all()] == ["test-reports.tar.gz"]
    assert f"verdict for cpu run {upload.run_id}: ok" in done.stdout


def test_report_folders_name_the_test_file_of_main_reports(parity_ci_run, tmp_path):
    # xmlrunner, run as `python test/test_ops.py`, names classes __main__.*: only the folder it
    # writes to (test-reports/python-unittest/test.test_ops/) says which file ran.
    folder = tmp_path / "test-reports" / "python-unittest" / "test.test_ops"
    folder.mkdir(parents=True)
    (folder / "TEST-TestOps.xml").write_bytes(
        junit_xml(Case("__main__.TestOps", "test_add"), Case("__main__.TestOps", "test_mul"))
    )

    done = parity_ci_run(
        "upload",
        str(tmp_path / "test-reports"),
        "--backend",
        "cpu",
        "--commit",
        commit_of("b"),
        "--wait",
    )

    assert_ok(done)
    assert set(TestCase.objects.values_list("key", flat=True)) == {
        "test/test_ops.py::TestOps::test_add",
        "test/test_ops.py::TestOps::test_mul",
    }


def test_file_hint_names_the_test_file_of_a_report_folder_that_names_none(parity_ci_run, tmp_path):
    # `python test/test_ops.py` under xmlrunner writing to a folder that names no file: only
    # --file-hint says which file ran, though the client packs the XML into test-reports/.
    folder = tmp_path / "test-reports"
    folder.mkdir()
    (folder / "TEST-TestOps.xml").write_bytes(junit_xml(Case("__main__.TestOps", "test_add")))

    done = parity_ci_run(
        "upload",
        str(folder),
        "--backend",
        "cpu",
        "--commit",
        commit_of("hint"),
        "--file-hint",
        "test/test_ops.py",
        "--wait",
    )

    assert_ok(done)
    assert list(TestCase.objects.values_list("key", flat=True)) == [
        "test/test_ops.py::TestOps::test_add"
    ]


@pytest.mark.parametrize("fault", FAULTS)
def test_an_upload_survives_a_spoiled_first_connection(parity_ci_run, live, tmp_path, fault):
    folder = write_reports(
        tmp_path / "reports", {f"test/test_a.py::TestA::test_{n}": "passed" for n in range(50)}
    )

    with FlakyProxy(upstream_port=urlsplit(live.base_url).port, fault=fault) as proxy:
        done = parity_ci_run(
            "upload",
            str(folder),
            "--backend",
            "cpu",
            "--commit",
            commit_of("c"),
            "--wait",
            env={"PARITY_URL": proxy.url},
        )

    assert_ok(done)
    assert "POST /api/v1/uploads/: " in done.stderr and "retrying in" in done.stderr
    assert proxy.connections >= 3  # the spoiled POST, the one resent, the status polls
    upload = Upload.objects.get()  # one, however often it was sent
    assert upload.status == "done" and upload.counts["passed"] == 50
    if fault == "lose_answer":  # the server had stored it: the resend found it
        assert "the server had it already" in done.stderr


# --- The verdict ----------------------------------------------------------------------------

A = "test/test_x.py::TestX::test_a"
B = "test/test_x.py::TestX::test_b"


def test_gate_passes_an_ok_verdict_and_fails_an_untracked_gap(parity_ci_run, live, tmp_path):
    reference_current(parity_ci_run, live, tmp_path / "cpu", {A: "passed", B: "passed"})

    passing = write_reports(tmp_path / "tpu-ok", {A: "passed", B: "passed"})
    ok_summary = tmp_path / "ok.md"
    ok = parity_ci_run(
        "upload",
        str(passing),
        "--backend",
        "tpu",
        "--commit",
        commit_of("tpu1"),
        "--branch",
        "main",
        "--complete",
        "--gate",
        "--summary",
        str(ok_summary),
    )

    assert_ok(ok)
    assert ": ok; opened 0 untracked, 0 tracked, 0 intended gap(s)" in ok.stdout
    assert "no new gaps" in ok.stdout
    assert "### parity: tpu run" in ok_summary.read_text() and "✅ ok" in ok_summary.read_text()

    failing = write_reports(tmp_path / "tpu-failing", {A: "passed", B: "failed"})
    step_summary = tmp_path / "step-summary.md"
    step_summary.write_text("## an earlier step\n")
    github = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_SHA": commit_of("tpu2"),
        "GITHUB_REF_NAME": "main",
        "GITHUB_RUN_ID": "555",
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "pytorch/xla",
        "GITHUB_EVENT_NAME": "push",
        "GITHUB_STEP_SUMMARY": str(step_summary),
    }
    bad = parity_ci_run(
        "upload", str(failing), "--backend", "tpu", "--complete", "--gate", env=github
    )

    assert bad.returncode == parity_ci.EXIT_GATE, bad.stderr
    assert "NOT OK (opens untracked gaps); opened 1 untracked" in bad.stdout
    # The verdict quotes the XML: no line of it is read as a workflow command.
    stop = next(line for line in bad.stdout.splitlines() if line.startswith("::stop-commands::"))
    assert bad.stdout.rstrip().endswith(f"::{stop.removeprefix('::stop-commands::')}::")
    assert [line.split()[:3] for line in bad.stdout.splitlines() if B in line] == [
        ["failed", "untracked", B]
    ]
    run = Run.objects.get(key="555-tpu")  # the CI's variables filled the run in
    assert (run.commit, run.branch, run.complete) == (commit_of("tpu2"), "main", True)
    assert run.ci_url == "https://github.com/pytorch/xla/actions/runs/555"
    markdown = step_summary.read_text()
    assert markdown.startswith("## an earlier step\n### parity: tpu run")  # appended
    assert "❌ not ok" in markdown and "| cpu (reference) | 100.0% |" in markdown
    test_page = f"/p/pytorch-xla/tests/{TestCase.objects.get(key=B).pk}/"
    assert f"[{B.replace('_', chr(92) + '_')}]({live.base_url}{test_page})" in markdown
    assert f"dashboard: {live.base_url}/p/pytorch-xla/runs/{run.pk}/" in bad.stdout
    assert f"[run {run.pk}]({live.base_url}/p/pytorch-xla/runs/{run.pk}/)" in markdown
    assert f"{live.base_url}/p/pytorch-xla/gaps/?backend=tpu&tracked=untracked&open=1" in markdown


def test_a_complete_run_from_another_branch_is_said_not_to_count(parity_ci_run, http_api, tmp_path):
    """The project compares main; CI uploads from master. The gate holds (a pull request's run
    is on its own branch too), but the client says, under the headline, that the run does not
    count, and the heatmap's empty state says where the complete run went."""
    folder = write_reports(tmp_path / "cpu", {A: "passed", B: "passed"})

    done = parity_ci_run(
        "upload",
        str(folder),
        "--backend",
        "cpu",
        "--commit",
        commit_of("cpu"),
        "--branch",
        "master",
        "--complete",
        "--gate",
    )

    assert_ok(done)
    headline, warning = done.stdout.splitlines()[:2]
    assert ": ok; opened 0 untracked" in headline
    assert warning.startswith(
        "warning: this run is on branch master; pytorch-xla compares main: the verdict holds, "
        "but the run does not count toward parity"
    )
    page = http_api.request("GET", "/p/pytorch-xla/")
    words = " ".join(re.sub(r"<[^>]+>", "", page.body).split())
    assert "No complete run on main yet. 1 complete run on master: pytorch-xla compares" in words


def test_gate_fails_a_run_opening_more_gaps_than_it_lists_with_their_full_count(
    parity_ci_run, live, tmp_path
):
    """The verdict lists a page of the gaps (a first run opens tens of thousands): the job
    fails on the count of all, and prints the page and how many more there are."""
    tests = [f"test/test_x.py::TestX::test_{n:03}" for n in range(parity_ci.VERDICT_GAPS + 20)]
    reference_current(parity_ci_run, live, tmp_path / "cpu", dict.fromkeys(tests, "passed"))
    failing = write_reports(tmp_path / "tpu", dict.fromkeys(tests, "failed"))
    summary = tmp_path / "summary.md"

    done = parity_ci_run(
        "upload",
        str(failing),
        "--backend",
        "tpu",
        "--commit",
        commit_of("tpu"),
        "--complete",
        "--gate",
        "--summary",
        str(summary),
    )

    assert done.returncode == parity_ci.EXIT_GATE, done.stderr
    assert f"opened {len(tests)} untracked, 0 tracked" in done.stdout
    listed = [line for line in done.stdout.splitlines() if line.startswith("failed ")]
    assert [line.split()[2] for line in listed] == tests[: parity_ci.VERDICT_GAPS]
    more = (
        f"... and 20 more: {len(tests)} new untracked gaps, "
        f"the first {parity_ci.VERDICT_GAPS} listed"
    )
    assert more in done.stdout
    rest = len(tests) - parity_ci.SUMMARY_MAX_GAPS
    assert f"… and {rest} more on [run " in summary.read_text()


# --- The files a backend runs ---------------------------------------------------------------

FILE_SECONDS = {"a": 40.0, "b": 30.0, "c": 20.0, "d": 12.0, "e": 8.0, "f": 5.0}


def test_files_are_the_reference_files_minus_exemptions_in_balanced_shards(
    parity_ci_run, client_env, http_api, live, tmp_path
):
    tests = {
        f"test/test_{x}.py::Test{x.upper()}::test_{n}": x for x in FILE_SECONDS for n in (1, 2)
    }
    reference_current(parity_ci_run, live, tmp_path / "cpu", dict.fromkeys(tests, "passed"))
    folder = tmp_path / "tpu"
    folder.mkdir()
    for x, seconds in FILE_SECONDS.items():  # each test takes half of its file's time
        cases = [
            Case(f"Test{x.upper()}", f"test_{n}", file=f"test/test_{x}.py", seconds=seconds / 2)
            for n in (1, 2)
        ]
        (folder / f"TEST-{x}.xml").write_bytes(junit_xml(*cases))
    assert_ok(
        parity_ci_run(
            "upload",
            str(folder),
            "--backend",
            "tpu",
            "--commit",
            commit_of("tpu"),
            "--complete",
            "--wait",
        )
    )
    current_run_wait(live, backend="tpu", run_id=Run.objects.get(backend__name="tpu").pk)
    reply = http_api.request(
        "POST",
        "/api/v1/projects/pytorch-xla/triage/",
        body=json.dumps(
            {
                "kind": "tracked",
                "match": "test/test_f.py",
                "backends": ["tpu"],
                "issue_url": ISSUE,
                "note": "no f on TPU",
            }
        ).encode(),
        headers={"Content-Type": "application/json"},
    )
    assert reply.status == 201, str(reply)

    everything = parity_ci_run("files", "--backend", "tpu")
    saved = tmp_path / "manifest.json"
    manifest = parity_ci_run("manifest", "--backend", "tpu", "-o", str(saved))
    shards = [parity_ci_run("files", "--backend", "tpu", "--shard", f"{n}/2") for n in (1, 2)]
    offline = client_run("files", "--manifest", str(saved), "--shard", "2/2", env={})

    for done in (everything, manifest, *shards, offline):
        assert_ok(done)
    files = [f"test/test_{x}.py" for x in "abcde"]  # f is exempted on TPU
    assert everything.stdout.splitlines() == files
    assert json.loads(saved.read_text())["durations"] == {
        f"test/test_{x}.py": FILE_SECONDS[x] for x in "abcde"
    }
    # Longest first onto the lightest: a, b, c (onto b), d (onto a), e (onto b, c): 52 s and
    # 58 s, the best split there is (110 s cannot go 55 and 55 with these files).
    assert [s.stdout.splitlines() for s in shards] == [
        ["test/test_a.py", "test/test_d.py"],
        ["test/test_b.py", "test/test_c.py", "test/test_e.py"],
    ]
    assert offline.stdout == shards[1].stdout
    # What the runner integrations call: the same manifest (unchanged: None), and the skip.
    client = parity_ci.Client.from_env(env=client_env)
    assert client.manifest("tpu")["files"] == files
    assert client.manifest("tpu", etag=client.last_etag) is None
    (exempted,) = client.resolve(
        "tpu", ["test/test_x.py::TestX::test_a", "test/test_f.py::TestF::test_1"]
    )
    assert (exempted["index"], exempted["kind"]) == (1, "tracked")
    assert exempted["message"] == f"no f on TPU ({ISSUE})"


# --- Refusals -------------------------------------------------------------------------------


def test_a_bad_token_is_refused_in_one_line(parity_ci_run, tmp_path):
    folder = write_reports(tmp_path / "reports", {A: "passed"})

    upload = parity_ci_run(
        "upload",
        str(folder),
        "--backend",
        "cpu",
        "--commit",
        commit_of("d"),
        env={"PARITY_TOKEN": "not-a-token"},
    )
    files = parity_ci_run("files", "--backend", "tpu", env={"PARITY_TOKEN": "not-a-token"})

    for done in (upload, files):
        assert done.returncode == parity_ci.EXIT_AUTH
        assert "Traceback" not in done.stderr
        line = done.stderr.splitlines()[-1]
        assert line.startswith("parity: the server refused the token (HTTP 401: ")
        assert "set PARITY_TOKEN to an upload token of the project" in line
    assert not Upload.objects.exists()


def test_an_unknown_backend_is_refused_naming_the_known_ones(parity_ci_run, tmp_path):
    folder = write_reports(tmp_path / "reports", {A: "passed"})

    upload = parity_ci_run("upload", str(folder), "--backend", "fpga", "--commit", commit_of("e"))
    files = parity_ci_run("files", "--backend", "fpga")

    for done in (upload, files):
        assert done.returncode == parity_ci.EXIT_REJECTED
        assert "Traceback" not in done.stderr
        line = done.stderr.splitlines()[-1]
        assert "Unknown backend 'fpga'" in line and "cpu, gpu, neuron, tpu" in line
        assert line.endswith("(HTTP 400)")


def test_an_upload_that_fails_to_ingest_says_why(parity_ci_run, tmp_path):
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "TEST-cut.xml").write_bytes(
        (FIXTURES_DIR / "junit" / "bad_truncated.xml").read_bytes()
    )

    done = parity_ci_run(
        "upload", str(folder), "--backend", "cpu", "--commit", commit_of("g"), "--wait"
    )

    assert done.returncode == parity_ci.EXIT_UPLOAD_FAILED
    upload = Upload.objects.get()
    assert upload.status == "failed"
    assert done.stderr.splitlines()[-1] == f"parity: upload {upload.pk} failed: {upload.error}"
    assert "reports/TEST-cut.xml" in upload.error  # the server names the file inside the archive


# --- Python 3.8 -----------------------------------------------------------------------------


def test_the_client_uploads_and_gates_on_python_3_8(parity_ci_run, tmp_path):
    python = python38()
    if python is None:
        pytest.skip("no Python 3.8 here (python3.8, ~/.pyenv/versions/3.8*, PARITY_TEST_PYTHON38)")
    folder = write_reports(tmp_path / "reports", {A: "passed", B: "skipped"})

    done = parity_ci_run(
        "upload",
        str(folder),
        "--backend",
        "cpu",
        "--commit",
        commit_of("f"),
        "--gate",
        python=python,
    )

    assert_ok(done)
    assert Upload.objects.get().counts["skipped"] == 1
