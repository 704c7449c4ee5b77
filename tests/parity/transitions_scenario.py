"""A seeded history of one ROCm variant with one known upgrade, for the tests of version
transitions (engine, pages, API, digest, browser). The outcomes are drawn from a seeded random
generator; what each kind of the transition report must list is computed here from the
uploaded outcomes alone (``expected``), never from the engine.

    day 1  rocm-gfx942  rocm=7.1   tests 0..109
    day 2  rocm-gfx942  rocm=7.1   tests 0..109, other outcomes: no transition
    day 3  rocm-gfx942  rocm=7.14  tests 5..119: the upgrade (0..4 gone, 110..119 new)
    day 3  rocm-gfx942  rocm=8.0   on a pull request's branch: never current, no transition
    day 4  rocm-gfx942  rocm=7.14  tests 5..119, other outcomes: no transition

cpu, the reference, passes every test. Two conditioned exemptions name rocm: ``rocm < 7.14``
stops holding at the upgrade, ``rocm >= 7.14`` starts.
"""

import json
import random

from parity.models import Backend, Project, Run, Triage
from parity.services.triage import TriageRequest, triage_create
from tests.parity.conftest import commit_of, run_xml

TESTS = [f"test/test_{f}.py::TestT{f.upper()}::test_{n:03d}" for f in "ab" for n in range(60)]
BEFORE, AFTER = TESTS[:110], TESTS[5:]
OUTCOMES = ["passed"] * 5 + [("failed", "mismatch"), ("error", "HIP error"), ("skipped", "no")]
OLD, NEW = {"arch": "gfx942", "rocm": "7.1"}, {"arch": "gfx942", "rocm": "7.14"}
VARIANT = "rocm-gfx942"
ISSUE = "https://github.com/pytorch/xla/issues/46"


def draw(rng: random.Random, tests: list[str]) -> dict:
    return {test: rng.choice(OUTCOMES) for test in tests}


def history(seed: int = 46) -> dict[str, dict]:
    """The runs' outcomes by name."""
    rng = random.Random(seed)
    return {
        "day1": draw(rng, BEFORE),
        "day2": draw(rng, BEFORE),
        "day3": draw(rng, AFTER),
        "pr": draw(rng, AFTER),
        "day4": draw(rng, AFTER),
    }


def _status(outcome) -> str:
    return "passed" if outcome == "passed" else outcome[0]


def expected(before: dict, after: dict) -> dict[str, set[str]]:
    """The transition report's lists, from two runs' uploaded outcomes."""
    failing = {"failed", "error"}
    return {
        "fail_to_pass": {
            t
            for t in before.keys() & after.keys()
            if _status(before[t]) in failing and _status(after[t]) == "passed"
        },
        "pass_to_fail": {
            t
            for t in before.keys() & after.keys()
            if _status(before[t]) == "passed" and _status(after[t]) in failing
        },
        "new": set(after) - set(before),
        "gone": set(before) - set(after),
    }


def sender(ingest):
    """Upload one complete run of ``backend`` with ``attributes``; returns the run."""

    def send(backend, cases, *, day, attributes=None, branch="master", run=None) -> Run:
        response = ingest(
            ("results.xml", run_xml(cases)),
            backend=backend,
            commit=commit_of(day + branch),
            branch=branch,
            run=run or f"{day}-{backend}-{branch}",
            complete="true",
            timestamp=f"{day}T12:00:00Z",
            attributes=json.dumps(attributes or {}),
        )
        assert response.status_code in (200, 202), response.content
        return Run.objects.get(pk=response.json()["run"])

    return send


def upgrade_upload(project: Project, ingest, runs: dict[str, dict] | None = None) -> dict:
    """The history above, uploaded; returns its runs by name."""
    runs = runs or history()
    send = sender(ingest)
    Backend.objects.get_or_create(project=project, name="rocm")
    send("cpu", dict.fromkeys(TESTS, "passed"), day="2026-05-01")
    for name, tests in (
        ("rocm < 7.14", TESTS[:3]),  # each its own test, so both stay named
        ("rocm >= 7.14", TESTS[3:6]),
    ):
        triage_create(
            project=project,
            request=TriageRequest(
                kind="tracked",
                backends=["rocm"],
                match=tests[0],
                issue_url=ISSUE,
                note=f"only at {name}",
                condition=name,
            ),
        )
    uploaded = {
        "day1": send("rocm", runs["day1"], day="2026-05-01", attributes=OLD),
        "day2": send("rocm", runs["day2"], day="2026-05-02", attributes=OLD),
        "day3": send("rocm", runs["day3"], day="2026-05-03", attributes=NEW),
        "pr": send(
            "rocm", runs["pr"], day="2026-05-03", attributes={**NEW, "rocm": "8.0"}, branch="pr"
        ),
        "day4": send("rocm", runs["day4"], day="2026-05-04", attributes=NEW),
    }
    assert Triage.objects.filter(project=project).count() == 2
    return uploaded
