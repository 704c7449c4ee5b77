"""The roll-up steps alone: the heatmap's file cells and the per-day reason counts, from
current outcomes and open gaps made with the ORM."""

from parity.engine.rollups import file_cells_write, reason_daily_write
from parity.models import FileCell, Gap, Outcome, ReasonDaily
from tests.parity.engine.rows import backend_of, current_set, gap_open, run_make

P, S, F, E = Outcome.PASSED, Outcome.SKIPPED, Outcome.FAILED, Outcome.ERROR


def cells(project) -> dict[str, tuple[int, ...]]:
    tpu = backend_of(project, "tpu")
    file_cells_write(project_id=project.pk, backend_ids=[tpu.pk])
    rows = FileCell.objects.filter(backend=tpu).values_list(
        "file", "passed", "failed", "error", "skipped", "missing"
    )
    return {file: tuple(counts) for file, *counts in rows}


def test_file_cells_count_outcomes_and_missing_tests_per_file(project):
    run = run_make(project, "tpu")
    outcomes = {"a.py::A::t1": P, "a.py::A::t2": F, "a.py::A::t3": (S, "x"), "b.py::B::t1": E}
    current_set(project, "tpu", outcomes, run=run)
    gap_open(project, "tpu", "b.py::B::t2", "missing", run=run)
    gap_open(project, "tpu", "c.py::C::t1", "missing", run=run)
    gap_open(project, "tpu", "a.py::A::t2", "failed", run=run)  # counted by its outcome only

    assert cells(project) == {
        "a.py": (1, 1, 0, 1, 0),
        "b.py": (0, 0, 1, 0, 1),
        "c.py": (0, 0, 0, 0, 1),
    }

    current_set(project, "tpu", {"a.py::A::t1": P}, run=run)
    Gap.objects.all().delete()
    assert cells(project) == {"a.py": (1, 0, 0, 0, 0)}  # files without tests lose their cell


def daily(project) -> dict[tuple[str, str], int]:
    rows = ReasonDaily.objects.filter(backend__name="tpu").values_list(
        "day", "reason__text", "count"
    )
    return {(str(day), text): count for day, text, count in rows}


def test_reason_daily_counts_per_day_and_drops_to_zero(project):
    day1 = run_make(project, "tpu", day="2026-04-01")
    current_set(
        project,
        "tpu",
        {"a.py::A::t1": (S, "later"), "a.py::A::t2": (S, "later"), "a.py::A::t3": (S, "gone")},
        run=day1,
    )
    reason_daily_write(run=day1)

    day2 = run_make(project, "tpu", day="2026-04-02")
    current_set(project, "tpu", {"a.py::A::t1": (S, "later"), "a.py::A::t2": P}, run=day2)
    reason_daily_write(run=day2)
    rerun = run_make(project, "tpu", day="2026-04-02", key="rerun")  # same day: replaces
    current_set(
        project, "tpu", {"a.py::A::t1": (S, "later"), "a.py::A::t2": (S, "later")}, run=rerun
    )
    reason_daily_write(run=rerun)

    assert daily(project) == {
        ("2026-04-01", "later"): 2,
        ("2026-04-01", "gone"): 1,
        ("2026-04-02", "later"): 2,
        ("2026-04-02", "gone"): 0,  # an explicit zero: its trend line drops
    }


def _all_cells(project) -> dict[tuple[str, str], tuple[int, ...]]:
    rows = FileCell.objects.filter(project=project).values_list(
        "backend__name", "file", "passed", "failed", "error", "skipped", "missing"
    )
    return {(backend, file): tuple(counts) for backend, file, *counts in rows}


def test_missing_only_recount_gives_the_full_recount(project):
    """When the reference moves on, the other backends' cells recount their missing tests only
    (their outcomes stayed): what every file of every backend recounted whole gives."""
    backends = [b.pk for b in project.backends.all()]
    run = run_make(project, "tpu")
    current_set(project, "tpu", {"a.py::A::t1": P, "b.py::B::t1": (S, "x")}, run=run)
    gap_open(project, "tpu", "a.py::A::t2", "missing", run=run)  # a.py: outcomes and missing
    gap_open(project, "tpu", "c.py::C::t1", "missing", run=run)  # c.py: missing only
    gap_open(project, "tpu", "d.py::D::t1", "missing", run=run)
    file_cells_write(project_id=project.pk, backend_ids=backends)
    # The reference moved on: a.py's and c.py's missing tests run no more there, d.py gained one,
    # e.py is new.
    Gap.objects.filter(test__key__in=["a.py::A::t2", "c.py::C::t1"]).delete()
    gap_open(project, "tpu", "d.py::D::t2", "missing", run=run)
    gap_open(project, "tpu", "e.py::E::t1", "missing", run=run)

    file_cells_write(project_id=project.pk, backend_ids=backends, outcomes_changed=[])
    recounted = _all_cells(project)
    file_cells_write(project_id=project.pk, backend_ids=backends)

    assert (
        recounted
        == _all_cells(project)
        == {
            ("tpu", "a.py"): (1, 0, 0, 0, 0),
            ("tpu", "b.py"): (0, 0, 0, 1, 0),
            ("tpu", "d.py"): (0, 0, 0, 0, 2),
            ("tpu", "e.py"): (0, 0, 0, 0, 1),
        }
    )
