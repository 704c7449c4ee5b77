"""A sharded run as the README's command makes it (issue 45 #5): every shard runs
``parity_ci.py run --shard I/N … --complete --wait --gate``. The run completes once all N shards
said so, not when the first did; the split the shards compute is pinned for the run key,
whatever completes meanwhile; and a shard gates on its own files until the run is complete."""

import itertools

import pytest
from rest_framework.test import APIClient

from parity.models import BackendState, Run, RunSplit, Upload
from tests.junit_builder import Case, junit_xml

FILES = ["test/test_a.py", "test/test_b.py", "test/test_c.py", "test/test_d.py"]


def _report(file: str, outcome: str = "passed", seconds: float = 1.0) -> tuple[str, bytes]:
    stem = file.split("/")[-1].removesuffix(".py")
    case = Case(f"test.{stem}", "test_one", outcome, file=file, seconds=seconds)
    return (f"{stem}.xml", junit_xml(case))


@pytest.fixture
def reference(ingest):
    """The reference (cpu) passes one test in each of the four files."""
    for file in FILES:
        ingest(_report(file), backend="cpu", run="cpu-1")
    answer = ingest(
        _report("test/test_a.py", seconds=2.0), backend="cpu", run="cpu-1", complete="true"
    )
    assert Run.objects.get(pk=answer.json()["run"]).complete


def _shard(ingest, index: int, count: int, *, outcome: str = "passed", complete: bool = True):
    answer = ingest(
        _report(FILES[index - 1], outcome),
        backend="tpu",
        run="ci-7-tpu",
        shard=f"{index}/{count}",
        complete="true" if complete else "false",
    )
    assert answer.status_code == 202, answer.content
    return Run.objects.get(pk=answer.json()["run"])


@pytest.mark.parametrize("order", [(1, 2, 3, 4), (4, 2, 1, 3), (3, 4, 2, 1)])
def test_the_run_completes_when_the_last_of_its_shards_arrives(reference, ingest, order):
    for arrived, index in enumerate(order, start=1):
        run = _shard(ingest, index, 4)
        assert run.complete == (arrived == 4), f"after shard {index}, {arrived} of 4 arrived"
    assert BackendState.objects.get(backend=run.backend).current_run_id == run.pk


def test_a_shard_with_no_file_to_run_arrives_and_completes_the_run(reference, ingest):
    # Five shards of four files: the split leaves one with nothing to run. Its job still sends
    # the run manifest, empty, and must count, or the run waits for it forever.
    for index in (1, 2, 3, 4):
        assert not _shard(ingest, index, 5).complete
    answer = ingest(
        backend="tpu", run="ci-7-tpu", shard="5/5", complete="true", run_manifest='{"files":[]}'
    )
    assert answer.status_code == 202, answer.content
    assert Run.objects.get(pk=answer.json()["run"]).complete


def test_an_empty_manifest_without_a_shard_is_still_refused(reference, ingest):
    answer = ingest(backend="tpu", run="ci-8-tpu", run_manifest='{"files":[]}')
    assert answer.status_code == 400
    assert "at least one 'file'" in str(answer.json())


def test_a_shard_sent_twice_counts_once(reference, ingest):
    _shard(ingest, 1, 2)
    run = _shard(ingest, 1, 2, outcome="failed")  # a rerun of shard 1: other content
    assert not run.complete
    assert _shard(ingest, 2, 2).complete


def test_only_the_last_shard_saying_complete_completes_it_when_all_arrived(reference, ingest):
    # Shard 4 says so and is ingested first; shards 1-3 (no --complete) arrive after it.
    assert not _shard(ingest, 4, 4).complete
    assert not _shard(ingest, 1, 4, complete=False).complete
    assert not _shard(ingest, 3, 4, complete=False).complete
    assert _shard(ingest, 2, 4, complete=False).complete


def test_shards_none_of_which_says_complete_leave_it_to_the_last_job(reference, ingest):
    for index in (1, 2):
        assert not _shard(ingest, index, 2, complete=False).complete
    answer = ingest(_report("test/test_c.py"), backend="tpu", run="ci-7-tpu", complete="true")
    assert Run.objects.get(pk=answer.json()["run"]).complete  # no shard: the last job says so


def test_a_label_that_is_no_count_completes_as_before(reference, ingest):
    answer = ingest(
        _report("test/test_a.py"), backend="tpu", run="r", shard="linux-1", complete="true"
    )
    assert Run.objects.get(pk=answer.json()["run"]).complete


def test_shards_that_disagree_on_the_count_are_refused(reference, ingest):
    _shard(ingest, 1, 4)
    refused = ingest(_report("test/test_b.py"), backend="tpu", run="ci-7-tpu", shard="2/3")

    assert refused.status_code == 400
    assert "4 shards" in refused.json()["detail"] and "2/3" in refused.json()["detail"]
    assert Upload.objects.filter(run__key="ci-7-tpu").count() == 1


def _manifest(api, **query):
    answer = api.get("/api/v1/projects/pytorch-xla/manifest/", {"backend": "tpu", **query})
    assert answer.status_code == 200, answer.content
    return answer.json()


def test_the_split_is_pinned_for_the_run_key(reference, api, ingest):
    first = _manifest(api, run="ci-7-tpu")
    assert first["files"] == FILES and first["split"]["run"] == "ci-7-tpu"

    # The reference's next run adds a file and shard 1 of tpu's completes a run of its own:
    # the list and the durations move for everyone else, not for this run's shards.
    ingest(_report("test/test_e.py"), backend="cpu", run="cpu-2")
    for file in FILES:
        ingest(_report(file), backend="cpu", run="cpu-2")
    ingest(_report("test/test_a.py", seconds=60.0), backend="tpu", run="other", complete="true")
    # (other content than its first upload of test_a, which the server would answer again)
    ingest(_report("test/test_a.py", seconds=3.0), backend="cpu", run="cpu-2", complete="true")

    moved = _manifest(api)
    assert "test/test_e.py" in moved["files"] and moved["split"] is None
    again = _manifest(api, run="ci-7-tpu")
    assert (again["files"], again["durations"]) == (first["files"], first["durations"])
    assert again["split"]["pinned_at"] == first["split"]["pinned_at"]
    assert _manifest(api, run="ci-8-tpu")["files"] == moved["files"]
    assert RunSplit.objects.count() == 2


def test_only_an_upload_token_pins_a_split(reference, api):
    anonymous = APIClient()  # the project is public: anyone reads its manifest
    answer = anonymous.get(
        "/api/v1/projects/pytorch-xla/manifest/", {"backend": "tpu", "run": "ci-7-tpu"}
    ).json()
    assert answer["split"] is None and not RunSplit.objects.exists()

    pinned = _manifest(api, run="ci-7-tpu")["split"]
    read = anonymous.get(
        "/api/v1/projects/pytorch-xla/manifest/", {"backend": "tpu", "run": "ci-7-tpu"}
    ).json()
    assert read["split"] == pinned  # a pin is read by anyone who reads the manifest


def _verdict(api, run: Run, shard: str = "") -> dict:
    answer = api.get(f"/api/v1/runs/{run.pk}/verdict/", {"shard": shard} if shard else {})
    assert answer.status_code == 200, answer.content
    return answer.json()


def test_a_shard_gates_on_its_own_files_until_the_run_is_complete(reference, api, ingest):
    broken = _shard(ingest, 3, 4, outcome="failed")  # shard 3 opens an untracked gap
    run = _shard(ingest, 1, 4)

    mine = _verdict(api, run, "1/4")
    assert mine["ok"] and mine["scope"] == {"shard": "1/4", "files": 1}
    theirs = _verdict(api, broken, "3/4")
    assert not theirs["ok"] and theirs["opened"]["untracked"] == 1
    assert [g["test"].split("::")[0] for g in theirs["gaps"]] == ["test/test_c.py"]
    assert not _verdict(api, run)["ok"]  # asked by no shard: the whole run so far

    _shard(ingest, 2, 4)
    last = _shard(ingest, 4, 4)
    assert last.complete
    whole = _verdict(api, last, "4/4")  # complete: the run's gate, every shard's tests
    assert whole["scope"] is None and not whole["ok"] and whole["opened"]["untracked"] == 1


def test_shards_split_the_pinned_list_into_each_file_once(reference, api):
    from parity.clients.parity_ci import shard_files

    manifest = _manifest(api, run="ci-7-tpu")
    shards = [shard_files(manifest, f"{i}/3") for i in (1, 2, 3)]
    assert sorted(itertools.chain(*shards)) == FILES
