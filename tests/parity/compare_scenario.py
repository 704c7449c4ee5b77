"""A seeded history for compare views, with known truth: tpu (the sample) against cpu (the basis)
over the last 13 days, three runs a day each, every test failing in a set number of runs at
places a seeded generator picks. What each test's counts and state must be is computed here from
the uploaded outcomes alone (``counts_of``), and the Fisher p-values in the tests by scipy, never
by the code under test.

    test          cpu fails / 39   tpu fails / 39   state
    steady              0                0          no significant difference
    extreme             0               20          extreme (a 51-point drop)
    regressed           0                5          regressed (13 points, p = 0.027)
    few                 0                2          no difference: under 3 failures
    noise               2                4          no difference: p well above 0.05
    improved           15                0          improved
    only_tpu            -                0          missing basis
    only_cpu            0                -          missing sample
    skipped_tpu         0          all skipped      missing sample

Runs that must not count: tpu's run 20 days ago and its run on a pull request's branch, both
failing ``steady`` (they would make it regressed), and an incomplete tpu run failing it too.
"""

import datetime
import random

from django.utils import timezone

from tests.parity.conftest import commit_of, run_xml

DAYS, PER_DAY = 13, 3
RUNS = DAYS * PER_DAY
T = "test/test_ops.py::TestOps::test_{}"
FAILS = {  # test: (cpu failures, tpu failures); None: not run there
    "steady": (0, 0),
    "extreme": (0, 20),
    "regressed": (0, 5),
    "few": (0, 2),
    "noise": (2, 4),
    "improved": (15, 0),
    "only_tpu": (None, 0),
    "only_cpu": (0, None),
    "skipped_tpu": (0, "skip"),
}
STATES = {
    "steady": "no_difference",
    "extreme": "extreme",
    "regressed": "regressed",
    "few": "no_difference",
    "noise": "no_difference",
    "improved": "improved",
    "only_tpu": "missing_basis",
    "only_cpu": "missing_sample",
    "skipped_tpu": "missing_sample",
}
FAIL = ("failed", "assert 1 == 2")
# A smaller history for the pages' and the API's tests (13 runs each), with its own truth.
SMALL = {"steady": (0, 0), "extreme": (0, 8), "improved": (8, 0), "only_cpu": (0, None)}
SMALL_STATES = {
    "steady": "no_difference",
    "extreme": "extreme",
    "improved": "improved",
    "only_cpu": "missing_sample",
}


def history(seed: int = 46, *, fails=None, per_day: int = PER_DAY) -> dict[str, list[dict]]:
    """Each backend's runs in the window, oldest first: {test id: outcome}."""
    rng = random.Random(seed)
    n = DAYS * per_day
    runs = {"cpu": [{} for _ in range(n)], "tpu": [{} for _ in range(n)]}
    for name, pair in (fails or FAILS).items():
        for backend, k in zip(("cpu", "tpu"), pair, strict=True):
            if k is None:
                continue
            failing = set(rng.sample(range(n), k)) if k != "skip" else set()
            for i, run in enumerate(runs[backend]):
                if k == "skip":
                    run[T.format(name)] = ("skipped", "no tpu kernel")
                else:
                    run[T.format(name)] = FAIL if i in failing else "passed"
    return runs


def counts_of(runs: list[dict]) -> dict[str, tuple[int, int]]:
    """(passed, failed) per test over ``runs``, skips left out."""
    counts: dict[str, list[int]] = {}
    for run in runs:
        for test, outcome in run.items():
            if outcome == "passed":
                counts.setdefault(test, [0, 0])[0] += 1
            elif outcome[0] in ("failed", "error"):
                counts.setdefault(test, [0, 0])[1] += 1
    return {t: (p, f) for t, (p, f) in counts.items()}


def _when(i: int, now: datetime.datetime, per_day: int) -> datetime.datetime:
    day, slot = divmod(i, per_day)
    return (now - datetime.timedelta(days=DAYS - day)).replace(
        hour=2 + 6 * slot, minute=0, second=0, microsecond=0
    )


def small_history() -> dict[str, list[dict]]:
    return history(fails=SMALL, per_day=1)


def compare_upload(ingest, runs: dict[str, list[dict]] | None = None) -> dict[str, list[dict]]:
    """The history above uploaded through the API (and the runs that must not count)."""
    runs = runs or history()
    now = timezone.now()
    per_day = len(runs["tpu"]) // DAYS

    def send(backend, cases, at, *, branch="master", complete=True, tag=""):
        stamp = at.strftime("%Y-%m-%dT%H:%M:%SZ")
        response = ingest(
            ("results.xml", run_xml(cases)),
            backend=backend,
            commit=commit_of(stamp, branch + tag),
            branch=branch,
            run=f"{stamp}-{backend}-{branch}{tag}",
            complete="true" if complete else "false",
            timestamp=stamp,
        )
        assert response.status_code in (200, 202), response.content

    for backend, backend_runs in runs.items():
        for i, cases in enumerate(backend_runs):
            send(backend, cases, _when(i, now, per_day))
    red = {T.format("steady"): FAIL}
    send("tpu", red, now - datetime.timedelta(days=20))
    send("tpu", red, _when(len(runs["tpu"]) - 1, now, per_day), branch="pr-1")
    send("tpu", red, _when(len(runs["tpu"]) - 1, now, per_day), complete=False, tag="late")
    return runs
