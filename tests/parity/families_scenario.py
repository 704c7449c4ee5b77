"""A project with a backend family, for the selectors', pages' and browser tests of families:
cpu the reference, rocm a family (its own row never runs) of three arches, tpu a flat backend
and gpu and neuron with no run. Counts are checked against ``failing_by_hand``, a plain reading
of the runs below, never against the engine.

    test    cpu     rocm-gfx942  rocm-gfx90a  rocm-navi31  tpu
    a::1    pass    failed       failed       failed       failed
    a::2    pass    skipped      pass         skipped      pass
    a::3    pass    pass         pass         -            pass
    b::1    pass    pass         failed       pass         pass
    b::2    pass    pass         pass         pass         pass
    b::3    skip    pass         pass         pass         -
"""

import datetime

from parity.models import Backend, Project

A, B = "test/test_a.py", "test/test_b.py"
DAY = str(datetime.datetime.now(datetime.UTC).date() - datetime.timedelta(days=1))
FAMILY = "rocm"
ARCHES = ("gfx942", "gfx90a", "navi31")
VARIANTS = tuple(f"{FAMILY}-{arch}" for arch in ARCHES)


def tid(file: str, n: int) -> str:
    return f"{file}::TestX::test_{n}"


FAILED, SKIPPED = ("failed", "boom"), ("skipped", "not on this arch")
RUNS: dict[str, dict] = {
    "cpu": {
        tid(A, 1): "passed",
        tid(A, 2): "passed",
        tid(A, 3): "passed",
        tid(B, 1): "passed",
        tid(B, 2): "passed",
        tid(B, 3): SKIPPED,
    },
    "rocm-gfx942": {
        tid(A, 1): FAILED,
        tid(A, 2): SKIPPED,
        tid(A, 3): "passed",
        tid(B, 1): "passed",
        tid(B, 2): "passed",
        tid(B, 3): "passed",
    },
    "rocm-gfx90a": {
        tid(A, 1): FAILED,
        tid(A, 2): "passed",
        tid(A, 3): "passed",
        tid(B, 1): FAILED,
        tid(B, 2): "passed",
        tid(B, 3): "passed",
    },
    "rocm-navi31": {
        tid(A, 1): FAILED,
        tid(A, 2): SKIPPED,
        tid(B, 1): "passed",
        tid(B, 2): "passed",
        tid(B, 3): "passed",
    },
    "tpu": {
        tid(A, 1): FAILED,
        tid(A, 2): "passed",
        tid(A, 3): "passed",
        tid(B, 1): "passed",
        tid(B, 2): "passed",
    },
}


def failing_by_hand() -> dict[str, set[str]]:
    """Per test the reference passes, the backends with a run that do not pass it (a gap)."""
    reference = {t for t, outcome in RUNS["cpu"].items() if outcome == "passed"}
    return {
        test: {b for b, cases in RUNS.items() if b != "cpu" and cases.get(test) != "passed"}
        for test in sorted(reference)
    }


def passing_by_hand(backend: str) -> tuple[int, int]:
    """(passing, compared): of the reference's passing tests, those passing on ``backend``."""
    failing = failing_by_hand()
    return sum(backend not in f for f in failing.values()), len(failing)


def family_add(project: Project) -> None:
    """rocm and its three arches, as the upload path makes them (``Backend.family``)."""
    family = Backend.objects.create(project=project, name=FAMILY)
    for arch, name in zip(ARCHES, VARIANTS, strict=True):
        Backend.objects.create(project=project, name=name, family=family, attributes={"arch": arch})


def upload_families(upload_run, project: Project) -> Project:
    family_add(project)
    for backend, cases in RUNS.items():
        upload_run(backend, cases, day=DAY)
    project.refresh_from_db()
    return project
