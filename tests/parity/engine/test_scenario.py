"""A hand-built two-day history of 4 backends and 12 tests, uploaded through the API, with every
endpoint's numbers asserted exactly.

Day 1 (every run complete, on master):
    cpu     t1-t10 pass, t11 skipped "needs cuda"                              (reference)
    gpu     t1-t11 pass but t2 failed
    tpu     t1 pass, t2 skipped with an issue URL, t3 skipped with no issue, t4 failed,
            t5 error, t6 absent, t7 skipped "bf16 by design", t8-t10 pass, t11 skipped
            "needs cuda", t12 passes (runs only on TPU)
    neuron  t1-t10 pass but t8 failed
Triage after day 1: the bf16 reason is intended (every backend); neuron's t8 gap is tracked.
Day 2:
    cpu     as day 1
    gpu     a run on a feature branch with t2 fixed (not current: not the default branch)
    tpu     as day 1 but t4 errors now (the gap changes state)
    neuron  t1-t8 pass (t8's gap closes: its triage is stale), t9-t10 absent (coverage drop)
"""

import pytest

from parity.models import Gap, Reason, Run, TestCase
from tests.parity.conftest import utc
from tests.parity.engine.rows import gap_history

A, B, C = "test/ops/test_a.py::TestA::", "test/ops/test_b.py::TestB::", "test/test_c.py::TestC::"
T = {n: f"{(A, B, C)[(n - 1) // 4]}test_{n}" for n in range(1, 13)}
CUDA = "needs cuda"
ISSUE_URL = "https://github.com/pytorch/xla/issues/1234"
WITH_ISSUE = f"Not supported on TPU, see {ISSUE_URL}"
PLAIN = "not implemented yet"
BF16 = "TPU computes in bf16 by design"
TRIAGE_URL = "https://github.com/pytorch/xla/issues/777"
DAY1, DAY2 = "2026-04-01", "2026-04-02"
URL = "/api/v1/projects/pytorch-xla"


def passing(*numbers: int) -> dict:
    return {T[n]: "passed" for n in numbers}


def tpu_run(t4: tuple[str, str]) -> dict:
    return {
        **passing(1),
        T[2]: ("skipped", WITH_ISSUE),
        T[3]: ("skipped", PLAIN),
        T[4]: t4,
        T[5]: ("error", "RuntimeError: device lost"),
        T[7]: ("skipped", BF16),
        **passing(8, 9, 10),
        T[11]: ("skipped", CUDA),
        **passing(12),
    }


CPU = {**passing(*range(1, 11)), T[11]: ("skipped", CUDA)}


@pytest.fixture
def runs(upload_run, api) -> dict[str, int]:
    runs = {
        "cpu1": upload_run("cpu", CPU, day=DAY1),
        "gpu1": upload_run(
            "gpu", {**passing(*range(1, 12)), T[2]: ("failed", "AssertionError: 1 != 2")}, day=DAY1
        ),
        "tpu1": upload_run("tpu", tpu_run(("failed", "Tensor-likes are not close!")), day=DAY1),
        "neuron1": upload_run(
            "neuron",
            {**passing(*range(1, 11)), T[8]: ("failed", "AssertionError: neuron")},
            day=DAY1,
        ),
    }
    bf16 = Reason.objects.get(text=BF16).pk
    neuron_t8 = Gap.objects.get(backend__name="neuron", test__key=T[8], is_open=True).pk
    for body in (
        {"kind": "intended", "reason": bf16, "note": "TPUs compute matmuls in bf16"},
        {"kind": "tracked", "gap": neuron_t8, "issue_url": TRIAGE_URL},
    ):
        response = api.post(f"{URL}/triage/", body, format="json")
        assert response.status_code == 201, response.content
    runs |= {
        "cpu2": upload_run("cpu", CPU, day=DAY2),
        "gpu_feature": upload_run("gpu", passing(*range(1, 12)), day=DAY2, branch="feature"),
        "tpu2": upload_run("tpu", tpu_run(("error", "RuntimeError: device lost")), day=DAY2),
        "neuron2": upload_run("neuron", passing(*range(1, 9)), day=DAY2),
    }
    return runs


def _backend(run: int, commit: str, score, passing, gaps=(0, 0, 0, 0), **counts) -> dict:
    return {
        "run": run,
        "commit": commit,
        "complete": True,
        "score": score,
        "score_raw": score,  # the same with no intended gap
        "passing": passing,
        "reference_passing": 10,
        "gaps": dict(zip(("skipped", "failed", "error", "missing"), gaps, strict=True)),
        "tracked": 0,
        "untracked": 0,
        "intended": 0,
        "tracked_closed": 0,
        "reference_missing": 0,
        "pending": 0,
        "not_applicable": 0,
        "rerun": 0,
        # The reference's run holds 11 tests, one it does not pass (only agree_any reads that).
        "reference_tests": 11,
        "differ_not_passed": 0,
        "not_applicable_not_passed": 0,
        "score_definition": {
            "kind": "reference_passing",
            "counts_intended": False,
            "counts_not_applicable": False,
        },
        "coverage_drop": False,
        "reference_run": None,
        "family": "",  # none of these backends is a variant
        **counts,
    }


def test_parity_numbers_per_backend(runs, api):
    body = api.get(f"{URL}/parity/").json()

    assert (body["project"], body["reference"]) == ("pytorch-xla", "cpu")
    backends = {b.pop("backend"): b for b in body["backends"]}
    assert list(backends) == ["cpu", "gpu", "neuron", "tpu"]  # the reference first
    for b in backends.values():
        assert b.pop("started_at") and b.pop("is_reference") in (True, False)
    commit = dict(Run.objects.values_list("pk", "commit"))
    assert backends["cpu"] == _backend(runs["cpu2"], commit[runs["cpu2"]], 1.0, 10, test_count=11)
    assert backends["gpu"] == _backend(
        runs["gpu1"], commit[runs["gpu1"]], 0.9, 9, (0, 1, 0, 0), untracked=1, test_count=11
    )
    assert backends["tpu"] == _backend(
        runs["tpu2"],
        commit[runs["tpu2"]],
        0.4444,  # the headline: 4 of the 9 the reference passes that are not intended gaps
        4,
        (3, 0, 2, 1),
        score_raw=0.4,  # 4 of 10, the intended gap counted as a failure
        tracked=1,
        untracked=4,
        intended=1,
        reference_missing=1,
        test_count=11,
    )
    assert backends["neuron"] == _backend(
        runs["neuron2"],
        commit[runs["neuron2"]],
        0.8,
        8,
        (0, 0, 0, 2),
        untracked=2,
        coverage_drop=True,
        test_count=8,
    )


def _cells(**by_backend: dict) -> dict:
    # "flaky": of its gaps, those that read flaky (states from history: none here).
    zero = dict.fromkeys(("passed", "failed", "error", "skipped", "missing", "pending", "flaky"), 0)
    return {b: {**zero, **by_backend.get(b, {})} for b in ("cpu", "gpu", "neuron", "tpu")}


FILES = {
    "test/ops/test_a.py": _cells(
        cpu={"passed": 4},
        gpu={"passed": 3, "failed": 1},
        tpu={"passed": 1, "skipped": 2, "error": 1},
        neuron={"passed": 4},
    ),
    "test/ops/test_b.py": _cells(
        cpu={"passed": 4},
        gpu={"passed": 4},
        tpu={"error": 1, "missing": 1, "skipped": 1, "passed": 1},
        neuron={"passed": 4},
    ),
    "test/test_c.py": _cells(
        cpu={"passed": 2, "skipped": 1},
        gpu={"passed": 3},
        tpu={"passed": 3, "skipped": 1},
        neuron={"missing": 2},
    ),
}


def test_file_heatmap_and_folders(runs, api):
    files = api.get(f"{URL}/parity/").json()["files"]
    assert files == [{"file": f, "cells": cells} for f, cells in FILES.items()]

    folders = api.get(f"{URL}/parity/?dir=1").json()["files"]
    ops = {
        backend: {
            k: FILES["test/ops/test_a.py"][backend][k] + FILES["test/ops/test_b.py"][backend][k]
            for k in FILES["test/ops/test_a.py"][backend]
        }
        for backend in ("cpu", "gpu", "neuron", "tpu")
    }
    assert folders == [
        {"file": "test", "cells": FILES["test/test_c.py"]},
        {"file": "test/ops", "cells": ops},
    ]


def number(test: str) -> str:
    return test.rsplit("_", 1)[1]


def _gaps(api, query: str = "") -> list[tuple]:
    body = api.get(f"{URL}/gaps/{query}").json()
    assert body["count"] == len(body["results"])
    return [(g["backend"], number(g["test"]), g["state"]) for g in body["results"]]


def test_gap_lists_and_filters(runs, api):
    assert _gaps(api) == [
        ("gpu", "2", "failed"),
        ("neuron", "10", "missing"),
        ("neuron", "9", "missing"),
        ("tpu", "2", "skipped"),
        ("tpu", "3", "skipped"),
        ("tpu", "4", "error"),
        ("tpu", "5", "error"),
        ("tpu", "6", "missing"),
        ("tpu", "7", "skipped"),
    ]
    assert _gaps(api, "?backend=tpu&state=skipped") == [
        ("tpu", "2", "skipped"),
        ("tpu", "3", "skipped"),
        ("tpu", "7", "skipped"),
    ]
    assert _gaps(api, "?tracked=true") == [("tpu", "2", "skipped")]
    assert _gaps(api, "?tracked=false") == [
        ("gpu", "2", "failed"),
        ("neuron", "10", "missing"),
        ("neuron", "9", "missing"),
        ("tpu", "3", "skipped"),
        ("tpu", "4", "error"),
        ("tpu", "5", "error"),
        ("tpu", "6", "missing"),
    ]
    assert _gaps(api, "?intended=true") == [("tpu", "7", "skipped")]
    assert _gaps(api, "?state=reference_missing") == [("tpu", "12", "reference_missing")]
    assert _gaps(api, f"?since={DAY2}") == [("neuron", "10", "missing"), ("neuron", "9", "missing")]
    assert _gaps(api, f"?closed_since={DAY1}") == [("neuron", "8", "failed")]
    assert _gaps(api, "?closed_since=2026-04-03") == []


def test_gap_fields(runs, api):
    results = api.get(f"{URL}/gaps/?backend=tpu").json()["results"]
    by_test = {g["test"]: g for g in results}
    tracked = by_test[T[2]]
    assert {k: tracked[k] for k in ("reason", "issues", "triage", "stale", "first_seen")} == {
        "reason": WITH_ISSUE,
        "issues": [ISSUE_URL],
        "triage": None,
        "stale": False,
        "first_seen": utc(DAY1),
    }
    assert (by_test[T[3]]["reason"], by_test[T[3]]["issues"], by_test[T[3]]["tracked"]) == (
        PLAIN,
        [],
        False,
    )
    intended = by_test[T[7]]
    assert (intended["triage"], intended["intended"], intended["tracked"]) == (
        "intended",
        True,
        False,
    )
    assert by_test[T[6]]["reason"] is None  # missing: no result, no reason
    assert by_test[T[4]]["reason"] == "RuntimeError: device lost"  # its state changed on day 2

    (fixed,) = api.get(f"{URL}/gaps/?closed_since={DAY2}").json()["results"]
    assert {k: fixed[k] for k in ("test", "backend", "issues", "triage", "stale", "closed_at")} == {
        "test": T[8],
        "backend": "neuron",
        "issues": [TRIAGE_URL],
        "triage": "tracked",
        "stale": True,
        "closed_at": utc(DAY2),
    }


def test_every_gap_opening_change_and_closing_names_its_run(runs):
    events = [(b, number(key), *rest) for b, key, *rest in gap_history()]
    day1 = [e for e in events if e[5] in (runs["gpu1"], runs["tpu1"], runs["neuron1"])]
    assert sorted(day1) == sorted(
        [("gpu", "2", "opened", "", "failed", runs["gpu1"])]
        + [
            ("tpu", n, "opened", "", state, runs["tpu1"])
            for n, state in [
                ("2", "skipped"),
                ("3", "skipped"),
                ("4", "failed"),
                ("5", "error"),
                ("6", "missing"),
                ("7", "skipped"),
                ("12", "reference_missing"),
            ]
        ]
        + [("neuron", "8", "opened", "", "failed", runs["neuron1"])]
    )
    assert sorted(e for e in events if e not in day1) == sorted(
        [
            ("tpu", "4", "changed", "failed", "error", runs["tpu2"]),
            ("neuron", "8", "closed", "failed", "", runs["neuron2"]),
            ("neuron", "9", "opened", "", "missing", runs["neuron2"]),
            ("neuron", "10", "opened", "", "missing", runs["neuron2"]),
        ]
    )  # the reference's day-2 run changed nothing, so it caused no event


def test_skip_reasons_and_trend(runs, api):
    body = api.get(f"{URL}/skip-reasons/").json()
    rows = [
        (r["reason"], r["backends"], r["gaps"], r["untriaged"], r["issues"], r["tracked"])
        for r in body["results"]
    ]
    tpu_only = {"cpu": 0, "gpu": 0, "neuron": 0, "tpu": 1}
    none = dict.fromkeys(tpu_only, 0)
    # The most gaps caused first; CUDA skips the same test on the reference: no gap, common.
    # Only PLAIN's gap is neither tracked (an issue) nor intended (BF16's triage).
    assert rows == [
        (WITH_ISSUE, tpu_only, tpu_only, none, [ISSUE_URL], True),
        (BF16, tpu_only, tpu_only, none, [], False),
        (PLAIN, tpu_only, tpu_only, tpu_only, [], False),
        (CUDA, {"cpu": 1, "gpu": 0, "neuron": 0, "tpu": 1}, none, none, [], False),
    ]
    assert [r["intended"] for r in body["results"]] == [False, True, False, False]
    assert [r["common"] for r in body["results"]] == [False, False, False, True]
    assert not any(r["xfail"] for r in body["results"])
    assert (body["count"], body["untracked"]) == (4, 1)  # PLAIN: CUDA causes no gap
    assert body["no_reason"] == {"backends": none, "gaps": none, "untriaged": none}
    assert all(r["first_seen"] and r["last_seen"] for r in body["results"])

    cuda = body["results"][3]["id"]
    trend = api.get(f"{URL}/skip-reasons/{cuda}/trend/").json()
    both = {"cpu": 1, "gpu": 0, "neuron": 0, "tpu": 1}
    assert trend == {
        "id": cuda,
        "reason": CUDA,
        "days": [{"day": DAY1, "backends": both}, {"day": DAY2, "backends": both}],
    }


def test_test_search_and_history(runs, api):
    body = api.get(f"{URL}/tests/?q=test_c.py").json()
    assert body["count"] == 4
    assert [t["test"] for t in body["results"]] == [T[10], T[11], T[12], T[9]]

    t8 = TestCase.objects.get(key=T[8]).pk
    detail = api.get(f"{URL}/tests/{t8}/").json()
    assert (detail["id"], detail["test"], detail["file"]) == (t8, T[8], "test/ops/test_b.py")
    neuron = detail["backends"]["neuron"]
    assert (neuron["outcome"], neuron["gap"]) == ("passed", None)
    assert [(h["run"], h["outcome"], h["reason"]) for h in neuron["history"]] == [
        (runs["neuron2"], "passed", None),
        (runs["neuron1"], "failed", "AssertionError: neuron"),
    ]
    tpu = api.get(f"{URL}/tests/{TestCase.objects.get(key=T[6]).pk}/").json()["backends"]["tpu"]
    assert (tpu["outcome"], tpu["gap"], tpu["history"]) == (None, "missing", [])
    gpu = detail["backends"]["gpu"]
    assert [(h["run"], h["branch"]) for h in gpu["history"]] == [
        (runs["gpu_feature"], "feature"),
        (runs["gpu1"], "master"),
    ]


def test_triage_list_flags_the_stale_one(runs, api):
    body = api.get(f"{URL}/triage/").json()
    assert body["count"] == 2
    assert [
        (t["kind"], t["backends"], t["test"], t["reason"], t["issue"], t["stale"])
        for t in body["results"]
    ] == [
        ("tracked", ["neuron"], T[8], None, TRIAGE_URL, True),
        ("intended", [], None, BF16, None, False),
    ]


def test_verdicts_of_the_day_two_runs(runs, api):
    def verdict(run: str) -> dict:
        body = api.get(f"/api/v1/runs/{runs[run]}/verdict/").json()
        return {k: body[k] for k in ("ok", "opened", "closed", "coverage_drop", "baseline_run")}

    assert verdict("neuron2") == {
        "ok": False,
        "opened": {
            "tracked": 0,
            "untracked": 2,
            "intended": 0,
            "tracked_closed": 0,
            "infra": 0,
            "uncovered": 0,
            "flaky": 0,
        },
        "closed": 1,
        "coverage_drop": True,
        "baseline_run": runs["neuron1"],
    }
    none_opened = {
        "tracked": 0,
        "untracked": 0,
        "intended": 0,
        "tracked_closed": 0,
        "infra": 0,
        "uncovered": 0,
        "flaky": 0,
    }
    assert verdict("tpu2") == {  # t4 failed then errors: still one gap, none opened
        "ok": True,
        "opened": none_opened,
        "closed": 0,
        "coverage_drop": False,
        "baseline_run": runs["tpu1"],
    }
    assert verdict("gpu_feature") == {  # a branch run is judged against master's current run
        "ok": True,
        "opened": none_opened,
        "closed": 1,
        "coverage_drop": False,
        "baseline_run": runs["gpu1"],
    }
    assert verdict("cpu2") == {
        "ok": True,
        "opened": none_opened,
        "closed": 0,
        "coverage_drop": False,
        "baseline_run": runs["cpu1"],
    }


def test_a_reason_trend_is_its_last_days(runs, api):
    cuda = next(
        r["id"] for r in api.get(f"{URL}/skip-reasons/").json()["results"] if r["reason"] == CUDA
    )

    last = api.get(f"{URL}/skip-reasons/{cuda}/trend/?days=1").json()["days"]
    refused = api.get(f"{URL}/skip-reasons/{cuda}/trend/?days=0")

    assert [d["day"] for d in last] == [DAY2]
    assert refused.status_code == 400 and "days" in refused.json()
