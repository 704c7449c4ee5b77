"""Commit cadence over the live stack (issue 22, item 2): the reference runs a newer commit
that adds a file while TPU's current run is of the older one; uploaded through gunicorn and
recomputed by the Celery worker, the new file's tests are pending on TPU (no gap, out of the
score) until TPU's run of that commit lacks them, and the aligned view compares TPU at the
commit both ran."""

import time

import pytest

from tests.e2e.expect import upload_settled
from tests.junit_builder import Case, junit_xml

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PROJECT = "/api/v1/projects/pytorch-xla"
OPS, NEW = "test/test_ops.py", "test/test_new.py"
RECOMPUTED_SECONDS = 60
DAY_A, DAY_B = "2026-06-01", "2026-06-02"


def report(*cases: tuple[str, str, str]) -> tuple[str, bytes]:
    return (
        "report.xml",
        junit_xml(
            *(Case("T", name, outcome, f"{outcome} here", file=f) for f, name, outcome in cases)
        ),
    )


COMMIT_A = report((OPS, "test_add", "passed"), (OPS, "test_mul", "passed"))
COMMIT_B = report(
    (OPS, "test_add", "passed"),
    (OPS, "test_mul", "passed"),
    (NEW, "test_one", "passed"),
    (NEW, "test_two", "passed"),
)
TPU = report((OPS, "test_add", "passed"), (OPS, "test_mul", "skipped"))


def commit(day: str) -> str:
    return day.replace("-", "").ljust(40, "0")


def get(http_api, path: str):
    reply = http_api.request("GET", f"{PROJECT}/{path}")
    assert reply.status == 200, str(reply)
    return reply.body


def upload_current(http_api, live, *, backend: str, day: str, files) -> int:
    """Upload a complete run and wait until the worker made it the backend's current run."""
    reply = http_api.post_upload(
        files,
        backend=backend,
        commit=commit(day),
        branch="main",
        run=f"{day}-{backend}",
        complete="true",
        timestamp=f"{day}T12:00:00Z",
    )
    assert reply.status == 202, str(reply)
    assert upload_settled(http_api, reply.body["id"], seconds=60, live=live)["status"] == "done"
    run = reply.body["run"]
    deadline = time.monotonic() + RECOMPUTED_SECONDS
    while {b["backend"]: b["run"] for b in get(http_api, "parity/")["backends"]}.get(
        backend
    ) != run:
        live.assert_worker_alive()
        assert time.monotonic() < deadline, f"run {run} never became {backend}'s current run"
        time.sleep(0.2)
    return run


def gap_states(http_api, query: str = "") -> dict[str, str]:
    body = get(http_api, f"gaps/?backend=tpu{query}")
    return {g["test"]: g["state"] for g in body["results"]}


def test_a_file_the_reference_added_is_pending_until_tpu_runs_that_commit(http_api, live):
    upload_current(http_api, live, backend="cpu", day=DAY_A, files=COMMIT_A)
    tpu_a = upload_current(http_api, live, backend="tpu", day=DAY_A, files=TPU)
    upload_current(http_api, live, backend="cpu", day=DAY_B, files=COMMIT_B)

    assert gap_states(http_api) == {f"{OPS}::T::test_mul": "skipped"}
    parity = get(http_api, "parity/")
    tpu = {b["backend"]: b for b in parity["backends"]}["tpu"]
    assert (tpu["pending"], tpu["reference_passing"], tpu["gaps"]["missing"]) == (2, 2, 0)
    cells = {f["file"]: f["cells"]["tpu"] for f in parity["files"]}
    assert (cells[NEW]["pending"], cells[NEW]["missing"]) == (2, 0)
    # The aligned view compares TPU at commit A, the newest it shares with the reference.
    aligned = {b["backend"]: b for b in get(http_api, "parity/?aligned=1")["backends"]}["tpu"]
    assert (aligned["commit"], aligned["run"]) == (commit(DAY_A), tpu_a)
    assert gap_states(http_api, "&aligned=1") == {f"{OPS}::T::test_mul": "skipped"}

    # TPU runs commit B without the new file: its tests are missing gaps now.
    upload_current(http_api, live, backend="tpu", day=DAY_B, files=TPU)

    assert gap_states(http_api) == {
        f"{OPS}::T::test_mul": "skipped",
        f"{NEW}::T::test_one": "missing",
        f"{NEW}::T::test_two": "missing",
    }
    tpu = {b["backend"]: b for b in get(http_api, "parity/")["backends"]}["tpu"]
    assert (tpu["pending"], tpu["reference_passing"], tpu["gaps"]["missing"]) == (0, 4, 2)
