"""``PresenceBlock`` (``parity.engine.presence``) held to its plain model: after every recompute,
a test's bits list exactly the backends with a current outcome of it, and of those the ones
where it passes; whatever runs add, change, drop, or a rebuild retires. No block is empty."""

from collections import defaultdict

from django.db import connection

from parity.engine.recompute import project_recompute
from parity.models import CurrentOutcome, Outcome, PresenceBlock, Project
from tests.parity.dashboard_scenario import DAY1, DAY2

T = [f"test/f{n % 3}.py::TestF::test_{n}" for n in range(8)]


def model(project: Project) -> dict[int, tuple[list[int], list[int]]]:
    """The rows as ``CurrentOutcome`` says they are."""
    present, passing = defaultdict(list), defaultdict(list)
    for test, backend, outcome in CurrentOutcome.objects.filter(project=project).values_list(
        "test_id", "backend_id", "outcome"
    ):
        present[test].append(backend)
        if outcome == Outcome.PASSED:
            passing[test].append(backend)
    return {test: (sorted(present[test]), sorted(passing[test])) for test in present}


def stored(project: Project) -> dict[int, tuple[list[int], list[int]]]:
    """The blocks, read back a test at a time."""
    present, passing = defaultdict(list), defaultdict(list)
    for row in PresenceBlock.objects.filter(backend__project=project).order_by("backend_id"):
        assert row.present != 0, "an empty block is deleted"
        for bit in range(64):
            test = row.block * 64 + bit
            if row.present >> bit & 1:
                present[test].append(row.backend_id)
            if row.passing >> bit & 1:
                assert row.present >> bit & 1, "a test passes only where it is present"
                passing[test].append(row.backend_id)
    return {test: (present[test], passing[test]) for test in present}


def test_presence_follows_every_current_outcome(upload_run, xla):
    # The tests' ids straddle two blocks, one of them on bit 63 (a negative block).
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT setval(pg_get_serial_sequence('parity_testcase', 'id'),"
            " (SELECT coalesce(max(id), 0) / 64 * 64 + 64 + 60 FROM parity_testcase))"
        )
    upload_run("cpu", {t: "passed" for t in T}, day=DAY1)
    upload_run("tpu", {T[0]: "passed", T[1]: ("skipped", "no"), T[2]: ("failed", "boom")}, day=DAY1)
    upload_run("gpu", {t: "passed" for t in T[:5]}, day=DAY1)
    assert stored(xla) == model(xla) and len(stored(xla)) == len(T)
    assert {test % 64 for test in stored(xla)} >= {62, 63, 0, 1}

    # The next night: tpu passes what it skipped, fails what passed, drops a test, adds two.
    upload_run(
        "tpu",
        {T[0]: ("failed", "boom"), T[1]: "passed", T[3]: "passed", T[4]: ("skipped", "no")},
        day=DAY2,
    )
    # the reference drops a test, changes nothing else
    upload_run("cpu", {t: "passed" for t in T[1:]}, day=DAY2)
    assert stored(xla) == model(xla)

    # A rebuild after gpu's runs leave the default branch retires it.
    xla.default_branch = "main"
    xla.save(update_fields=["default_branch"])
    upload_run("cpu", {t: "passed" for t in T}, day=DAY2, branch="main", time="13:00")
    project_recompute(project=xla)
    assert stored(xla) == model(xla)
    gone = {b.pk for b in xla.backends.exclude(name="cpu")}
    assert stored(xla) and all(not gone & set(present) for present, _ in stored(xla).values())
