"""Many CI jobs posting at once: 50 shards of one run and 4 other runs, all in flight together,
then each run completed. Nothing is lost, nothing is stored twice, nothing answers 5xx."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from parity.models import Result, Run, Upload
from tests.e2e.client import ApiClient, Reply
from tests.e2e.expect import duplicated_tests, stored_counts, upload_settled
from tests.e2e.generate import Written, junit_write

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

COMMIT = "c0ffee" + "0" * 34
SHARDS = 50
OTHER_RUNS = {"gpu": "gpu", "tpu": "tpu", "neuron": "neuron", "cpu-nightly": "cpu"}  # key: backend
SHARDS_PER_OTHER_RUN = 3
CASES_PER_SHARD = 300


def _post_at_once(http_api: ApiClient, posts: list[tuple[Written, str, str]]) -> list[Reply]:
    """Every thread waits at a barrier, then all post together."""
    barrier = threading.Barrier(len(posts))

    def post(item: tuple[Written, str, str]) -> Reply:
        report, backend, run_key = item
        barrier.wait(timeout=60)
        return http_api.post_upload(report.path, backend=backend, commit=COMMIT, run=run_key)

    with ThreadPoolExecutor(max_workers=len(posts)) as pool:
        return list(pool.map(post, posts))


def test_shards_and_runs_posted_at_once_are_each_stored_once(http_api, live, tmp_path):
    posts = [(_shard(tmp_path, f"main{n}"), "cpu", "shards") for n in range(SHARDS)] + [
        (_shard(tmp_path, f"{key}{n}"), backend, key)
        for key, backend in OTHER_RUNS.items()
        for n in range(SHARDS_PER_OTHER_RUN)
    ]

    replies = _post_at_once(http_api, posts)

    assert [r.status for r in replies] == [202] * len(posts), [
        str(r) for r in replies if r.status != 202
    ]
    upload_ids = [r.body["id"] for r in replies]
    assert len(set(upload_ids)) == len(posts)
    run_ids = sorted({r.body["run"] for r in replies})
    assert len(run_ids) == 1 + len(OTHER_RUNS)
    for run_id in run_ids:
        reply = http_api.run_complete(run_id)
        assert reply.status == 200, str(reply)

    for upload_id, (report, _, _) in zip(upload_ids, posts, strict=True):
        body = upload_settled(http_api, upload_id, seconds=180, live=live)
        assert body["status"] == "done", body
        assert body["counts"] == report.expected_counts()
        assert stored_counts(upload_id=upload_id) == report.expected_counts()
    for run in Run.objects.filter(pk__in=run_ids):
        shards = SHARDS if run.key == "shards" else SHARDS_PER_OTHER_RUN
        assert run.complete and run.completed_at is not None
        assert Upload.objects.filter(run=run).count() == shards
        assert Result.objects.filter(run=run).count() == shards * CASES_PER_SHARD
        assert duplicated_tests(run_id=run.pk) == 0


def _shard(directory, name: str) -> Written:
    return junit_write(directory / f"{name}.xml", cases=CASES_PER_SHARD, prefix=f"{name}_")
