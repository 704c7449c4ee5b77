"""The upload API's run manifest: what a CI job was told to run and what happened to each
file, validated with a clear refusal and merged per run and file across shard uploads."""

import json

from parity.engine.freshness import stale_current_runs
from parity.models import Gap, RunFile, Upload, UploadStatus
from tests.conftest import FIXTURES_DIR

PYTEST_SMALL = FIXTURES_DIR / "junit" / "pytest_small.xml"


def manifest(*entries: dict) -> str:
    return json.dumps({"files": list(entries)})


def states(run_id: int) -> dict[str, tuple[str, str]]:
    return {f.file: (f.state, f.exit_status) for f in RunFile.objects.filter(run_id=run_id)}


def test_a_manifest_alone_is_an_upload_and_is_stored_per_file(api, ingest):
    response = ingest(
        run="nightly-1",
        run_manifest=manifest(
            {"file": "test/a.py", "signal": "SIGSEGV", "duration": 1.5},
            {"file": "test/b.py", "timed_out": True},
            {"file": "test/c.py", "exit_code": 5, "report": True, "tests": 0},
            {"file": "test/d.py", "exit_code": 124},
            {"file": "test/e.py", "started": False},
            {"file": "test/f.py", "exit_code": 1, "report": True, "tests": 3},
        ),
    )

    assert response.status_code == 202, response.content
    assert Upload.objects.get().status == UploadStatus.DONE
    assert states(response.json()["run"]) == {
        "test/a.py": ("crashed", "SIGSEGV"),
        "test/b.py": ("timed_out", "timed out"),
        "test/c.py": ("empty", "exit 5"),
        "test/d.py": ("crashed", "exit 124"),
        "test/e.py": ("not_run", "not started"),
        "test/f.py": ("ran", "exit 1"),
    }


def test_shards_merge_a_started_file_wins_over_one_only_expected(ingest):
    expected = manifest(
        {"file": "test/a.py", "started": False}, {"file": "test/b.py", "started": False}
    )
    crashed = manifest({"file": "test/b.py", "signal": "SIGABRT"})
    first = ingest(run="nightly-2", run_manifest=expected).json()["run"]
    ingest(PYTEST_SMALL, run="nightly-2", run_manifest=crashed)
    assert states(first) == {
        "test/a.py": ("not_run", "not started"),
        "test/b.py": ("crashed", "SIGABRT"),
    }

    # In the other order too: a list arriving late does not undo what a shard ran.
    ingest(run="nightly-3", run_manifest=crashed)
    later = ingest(run="nightly-3", run_manifest=expected).json()["run"]
    assert states(later) == {
        "test/a.py": ("not_run", "not started"),
        "test/b.py": ("crashed", "SIGABRT"),
    }


def test_shards_with_the_same_reports_keep_each_ones_manifest(ingest):
    first = ingest(PYTEST_SMALL, run="nightly-4", run_manifest=manifest({"file": "test/a.py"}))
    second = ingest(PYTEST_SMALL, run="nightly-4", run_manifest=manifest({"file": "test/b.py"}))
    assert (first.status_code, second.status_code) == (202, 202)
    assert set(states(first.json()["run"])) == {"test/a.py", "test/b.py"}


def test_a_bad_manifest_is_refused_saying_where_and_nothing_is_stored(ingest):
    cases = {
        "not json": "not JSON",
        json.dumps([]): 'an object with a "files" list',
        manifest({"file": ""}): "files[0].file must be a path",
        manifest({"file": "a.py", "exit": 1}): "files[0]: unknown field(s) exit",
        manifest({"file": "a.py", "tests": -1}): "files[0].tests must be an integer",
        manifest({"file": "a.py", "timed_out": "yes"}): "files[0].timed_out must be true or false",
        manifest({"file": "a.py"}, {"file": "a.py"}): "'a.py' is listed twice",
    }
    for text, message in cases.items():
        response = ingest(PYTEST_SMALL, run_manifest=text)
        assert response.status_code == 400, text
        [error] = response.json()["run_manifest"]
        assert message in error, (text, error)
    assert not Upload.objects.exists() and not RunFile.objects.exists()


def test_neither_a_file_nor_a_manifest_is_refused(ingest):
    response = ingest()
    assert response.status_code == 400
    assert "at least one 'file'" in response.json()["file"][0]


def _report(*files: str) -> tuple[str, bytes]:
    cases = "".join(
        f'<testcase classname="T" name="test_1" file="{file}" time="0.1"/>' for file in files
    )
    return "report.xml", f'<testsuite name="s" tests="{len(files)}">{cases}</testsuite>'.encode()


def test_a_late_shards_manifest_counts_even_when_its_report_is_bad(ingest):
    """The manifest is stored with the upload, whatever its report holds: when the report cannot
    be ingested, the run's gaps still follow the manifest, at once (the run is complete and
    current: no later completion would recompute it)."""
    ingest(_report("test/a.py", "test/b.py"), backend="cpu", run="ref", complete="true")
    run = ingest(_report("test/a.py"), backend="tpu", run="tpu-1", complete="true").json()["run"]
    gaps = Gap.objects.filter(backend__name="tpu", is_open=True)
    assert list(gaps.values_list("test__file", "state")) == [("test/b.py", "missing")]

    late = ingest(
        ("shard-2.xml", b"<testsuite><testcase"),
        backend="tpu",
        run="tpu-1",
        run_manifest=manifest({"file": "test/b.py", "signal": "SIGSEGV"}),
    )

    assert Upload.objects.get(pk=late.json()["id"]).status == UploadStatus.FAILED
    assert states(run)["test/b.py"] == ("crashed", "SIGSEGV")
    assert list(gaps.values_list("test__file", "state")) == [("test/b.py", "crashed")]
    assert stale_current_runs() == []
