"""Three weeks of one project, uploaded through the API as JUnit XML.

2026-W13 (Wed 25 Mar), the baseline:
    cpu     t1-t7 pass, t8 skipped "needs cuda"                                   (reference)
    tpu     as cpu but t2 skipped "not implemented yet"   (a gap that stays open throughout)
    neuron  as cpu
    gpu     never runs
2026-W14 (Wed 1 Apr):
    tpu     t3 fails (new, untracked); t4 skipped with an issue URL (new, tracked; a new reason)
    neuron  t6 absent (new missing gap); t7 errors (new, stays open in W15)
Between the W14 digest and the W15 runs, the reasons' issue links change: "not implemented
yet" gains a tracked triage (pytorch/xla#777); the issue-URL reason loses pytorch/xla#1234.
2026-W15 (Wed 8 Apr):
    tpu     t3 passes again (fixed); t5 skipped "TPU computes in bf16" (new, a new reason)
    neuron  t6 back (fixed); t7 still errors
"""

from parity.models import Reason
from parity.pure.weeks import Week
from parity.services.triage import reason_issues_set

W13, W14, W15 = Week(2026, 13), Week(2026, 14), Week(2026, 15)
A, B = "test/ops/test_a.py::TestA::", "test/test_b.py::TestB::"
T = {n: f"{A if n <= 4 else B}test_{n}" for n in range(1, 9)}
CUDA = "needs cuda"
PLAIN = "not implemented yet"
ISSUE_URL = "https://github.com/pytorch/xla/issues/1234"
WITH_ISSUE = f"Not supported on TPU, see {ISSUE_URL}"
TRIAGE_URL = "https://github.com/pytorch/xla/issues/777"
BF16 = "TPU computes in bf16"
CLOSE = "Tensor-likes are not close!"
LOST = "RuntimeError: device lost"


def passing(*numbers: int) -> dict:
    return {T[n]: "passed" for n in numbers}


CPU = {**passing(*range(1, 8)), T[8]: ("skipped", CUDA)}


def upload_week13(upload_run) -> None:
    day = "2026-03-25"
    upload_run("cpu", CPU, day=day)
    upload_run("tpu", {**CPU, T[2]: ("skipped", PLAIN)}, day=day)
    upload_run("neuron", CPU, day=day)


def upload_week14(upload_run) -> None:
    day = "2026-04-01"
    upload_run("cpu", CPU, day=day)
    upload_run(
        "tpu",
        {**CPU, T[2]: ("skipped", PLAIN), T[3]: ("failed", CLOSE), T[4]: ("skipped", WITH_ISSUE)},
        day=day,
    )
    neuron = {**CPU, T[7]: ("error", LOST)}
    del neuron[T[6]]
    upload_run("neuron", neuron, day=day)


def relink_reasons(api) -> None:
    """A maintainer triages "not implemented yet" with an issue; another unlinks the issue of
    the TPU reason in the admin."""
    plain = Reason.objects.get(text=PLAIN)
    body = {"kind": "tracked", "reason": plain.pk, "issue_url": TRIAGE_URL}
    response = api.post("/api/v1/projects/pytorch-xla/triage/", body, format="json")
    assert response.status_code == 201, response.content
    reason_issues_set(reason=Reason.objects.get(text=WITH_ISSUE), issues=[])  # the admin's


def upload_week15(upload_run) -> None:
    day = "2026-04-08"
    upload_run("cpu", CPU, day=day)
    upload_run(
        "tpu",
        {**CPU, T[2]: ("skipped", PLAIN), T[4]: ("skipped", WITH_ISSUE), T[5]: ("skipped", BF16)},
        day=day,
    )
    upload_run("neuron", {**CPU, T[7]: ("error", LOST)}, day=day)
