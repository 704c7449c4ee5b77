"""The aligned view (``?aligned=1``): each backend against the reference at the newest commit
both ran, checked against a model computed here from the two commits' runs."""

from parity.models import Run
from tests.parity.conftest import commit_of

URL = "/api/v1/projects/pytorch-xla"
A = "test/test_a.py::TestA::"
N = "test/test_new.py::TestNew::"
DAY1, DAY2, DAY3 = "2026-04-01", "2026-04-02", "2026-04-03"
SKIP, FAIL, ERR = ("skipped", "not here"), ("failed", "boom"), ("error", "crash")

CPU_A = {f"{A}t1": "passed", f"{A}t2": "passed", f"{A}t3": "passed", f"{A}t4": SKIP}
TPU_A = {f"{A}t1": "passed", f"{A}t2": SKIP, f"{A}t5": "passed"}
GPU_A = dict(CPU_A)
CPU_B = {**CPU_A, f"{A}t1": FAIL, f"{N}t1": "passed", f"{N}t2": "passed"}
GPU_B = {f"{A}t1": "passed", f"{A}t2": "passed", f"{A}t3": ERR, f"{N}t1": "passed"}
# TPU's latest run is of a commit the reference has not run: its aligned commit stays A.
TPU_C = {f"{A}t1": FAIL}


def _status(outcome) -> str:
    return outcome if isinstance(outcome, str) else outcome[0]


def model(reference: dict, backend: dict) -> tuple[dict, set]:
    """The numbers and gaps of ``backend`` against ``reference``, from the runs' cases."""
    passing = {t for t, o in reference.items() if _status(o) == "passed"}
    gaps = set()
    for test in passing:
        outcome = backend.get(test)
        if outcome is None:
            gaps.add((test, "missing"))
        elif _status(outcome) != "passed":
            gaps.add((test, _status(outcome)))
    counts = {s: sum(1 for _, g in gaps if g == s) for s in ("skipped", "failed", "error")}
    counts["missing"] = sum(1 for _, g in gaps if g == "missing")
    numbers = {
        "reference_passing": len(passing),
        "passing": len(passing) - len(gaps),
        "score": round((len(passing) - len(gaps)) / len(passing), 4),
        "gaps": counts,
        "reference_missing": len(set(backend) - set(reference)),
        "test_count": len(backend),
        "untracked": len(gaps),
    }
    return numbers, gaps


def test_each_backend_is_compared_at_the_newest_commit_it_shares_with_the_reference(
    upload_run, api
):
    cpu_a = upload_run("cpu", CPU_A, day=DAY1)
    tpu_a = upload_run("tpu", TPU_A, day=DAY1)
    upload_run("gpu", GPU_A, day=DAY1)
    cpu_b = upload_run("cpu", CPU_B, day=DAY2)
    gpu_b = upload_run("gpu", GPU_B, day=DAY2)
    upload_run("tpu", TPU_C, day=DAY3)

    body = api.get(f"{URL}/parity/?aligned=1").json()
    assert body["aligned"] is True
    backends = {b["backend"]: b for b in body["backends"]}
    expected = {
        "tpu": (commit_of(DAY1, "master"), tpu_a, cpu_a, *model(CPU_A, TPU_A)),
        "gpu": (commit_of(DAY2, "master"), gpu_b, cpu_b, *model(CPU_B, GPU_B)),
    }
    for name, (commit, run, reference_run, numbers, _) in expected.items():
        got = backends[name]
        assert (got["commit"], got["run"], got["reference_run"]) == (commit, run, reference_run)
        assert {key: got[key] for key in numbers} == numbers, name
    # Without ?aligned=1, TPU is read at its current run (commit C) against cpu's B.
    current = {b["backend"]: b for b in api.get(f"{URL}/parity/").json()["backends"]}
    assert (
        current["tpu"]["run"]
        == Run.objects.get(backend__name="tpu", commit=commit_of(DAY3, "master")).pk
    )
    assert current["tpu"]["reference_run"] is None

    listed = api.get(f"{URL}/gaps/?aligned=1&page_size=100").json()["results"]
    got = {(g["backend"], g["test"], g["state"]) for g in listed}
    want = {(name, t, s) for name, e in expected.items() for t, s in e[4]}
    assert got == want
    assert {g["commit"] for g in listed if g["backend"] == "tpu"} == {commit_of(DAY1, "master")}
    only = api.get(f"{URL}/gaps/?aligned=1&backend=tpu&state=reference_missing").json()
    assert [(g["test"], g["state"]) for g in only["results"]] == [(f"{A}t5", "reference_missing")]

    # The file cells: gpu's new file against cpu's B run.
    files = {f["file"]: f["cells"] for f in body["files"]}
    assert files["test/test_new.py"]["gpu"] == {
        "passed": 1,
        "failed": 0,
        "error": 0,
        "skipped": 0,
        "missing": 1,
        "pending": 0,
        "flaky": 0,  # the aligned view counts none: a state from history is the current one's
    }
