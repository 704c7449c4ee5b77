"""A two-day history of 3 test files on 4 backends, uploaded through the API, for the
dashboard's view and selector tests (``test_dashboard_*.py``). Days are yesterday and the day
before, so the pages' default windows (the last 7 or 28 days) include them.

    file                    cpu (ref)   gpu          neuron               tpu
    test/ops/test_a.py      a1-a4 pass  a2 failed    a1-a4 pass           a1 pass, a2 skipped
                                                                          (issue), a3 skipped
                                                                          day 1 / pass day 2,
                                                                          a4 error
    test/ops/test_b.py      b1-b4 pass  b1-b4 pass   absent day 1; day 2  b1-b4 pass
                                                     b1 skipped, rest
                                                     absent
    test/test_c.py          c1, c2      c1-c3 pass;  c1-c3 pass           c1, c2 pass,
                            pass, c3    day 2 c2                          c3 skipped (cuda)
                            skipped     failed
                            (cuda)
"""

import datetime

A, B, C = "test/ops/test_a.py", "test/ops/test_b.py", "test/test_c.py"
FILES = (A, B, C)
BACKENDS = ("cpu", "gpu", "neuron", "tpu")  # the reference first, then by name
ISSUE_URL = "https://github.com/pytorch/xla/issues/4242"
WITH_ISSUE = f"Not supported on TPU, see {ISSUE_URL}"
PLAIN = "not implemented yet"
CUDA = "needs cuda"
NEURON = "no neuron kernel"
TODAY = datetime.datetime.now(datetime.UTC).date()
DAY1, DAY2 = (str(TODAY - datetime.timedelta(days=n)) for n in (2, 1))


def tid(file: str, n: int) -> str:
    cls = {"test/ops/test_a.py": "TestA", "test/ops/test_b.py": "TestB"}.get(file, "TestC")
    return f"{file}::{cls}::test_{file[-4]}{n}"


def passing(file: str, *numbers: int) -> dict:
    return {tid(file, n): "passed" for n in numbers}


def runs_by_day() -> dict[str, dict[str, dict]]:
    cpu = {**passing(A, 1, 2, 3, 4), **passing(B, 1, 2, 3, 4), **passing(C, 1, 2)}
    cpu[tid(C, 3)] = ("skipped", CUDA)
    gpu = {**passing(A, 1, 3, 4), **passing(B, 1, 2, 3, 4), **passing(C, 1, 2, 3)}
    gpu[tid(A, 2)] = ("failed", "AssertionError: 1 != 2")
    tpu = {
        **passing(A, 1),
        tid(A, 2): ("skipped", WITH_ISSUE),
        tid(A, 3): ("skipped", PLAIN),
        tid(A, 4): ("error", "RuntimeError: device lost"),
        **passing(B, 1, 2, 3, 4),
        **passing(C, 1, 2),
        tid(C, 3): ("skipped", CUDA),
    }
    neuron = {**passing(A, 1, 2, 3, 4), **passing(C, 1, 2, 3)}
    return {
        DAY1: {"cpu": cpu, "gpu": gpu, "tpu": tpu, "neuron": neuron},
        DAY2: {
            "cpu": cpu,
            "gpu": {**gpu, tid(C, 2): ("failed", "flaky on gpu")},
            "tpu": {**tpu, tid(A, 3): "passed"},
            "neuron": {**neuron, tid(B, 1): ("skipped", NEURON)},
        },
    }


def upload_history(upload_run) -> dict[str, int]:
    """Upload both days (``upload_run`` from tests/parity/conftest.py); run ids by
    ``<backend><day 1|2>``."""
    runs = {}
    for index, (day, backends) in enumerate(runs_by_day().items(), start=1):
        for backend in BACKENDS:
            runs[f"{backend}{index}"] = upload_run(backend, backends[backend], day=day)
    return runs


# The heatmap on day 2: (passed, failed, error, skipped, missing) per file and backend.
HEATMAP = {
    A: {"cpu": (4, 0, 0, 0, 0), "gpu": (3, 1, 0, 0, 0), "neuron": (4, 0, 0, 0, 0),
        "tpu": (2, 0, 1, 1, 0)},
    B: {"cpu": (4, 0, 0, 0, 0), "gpu": (4, 0, 0, 0, 0), "neuron": (0, 0, 0, 1, 3),
        "tpu": (4, 0, 0, 0, 0)},
    C: {"cpu": (2, 0, 0, 1, 0), "gpu": (2, 1, 0, 0, 0), "neuron": (3, 0, 0, 0, 0),
        "tpu": (2, 0, 0, 1, 0)},
}  # fmt: skip


def upload_older_day(upload_run) -> None:
    """More history that changes no current run: every backend's first day again, 3 days ago."""
    older = str(TODAY - datetime.timedelta(days=3))
    first_day = next(iter(runs_by_day().values()))
    for backend in BACKENDS:
        upload_run(backend, first_day[backend], day=older)


def label(counts: tuple) -> str:
    return f"{counts[0]}/{sum(counts)}"
