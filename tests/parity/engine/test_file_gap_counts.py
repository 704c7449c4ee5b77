"""The heatmap's open gaps per backend and file (``FileGapCount``), kept by the gap table's
triggers: after every kind of write of gaps (a backend's first run, its nightly, a late shard,
the reference moving on, a triage granted and withdrawn, gaps deleted) they are what grouping
the open gaps themselves gives. ``test_nightly_scope`` holds them to the same over random runs."""

import datetime

import pytest
from django.db.models import Count, Q

from parity.definitions import INFRA_STATES, reads_flaky_q
from parity.engine import parity_recompute
from parity.engine.gap_triages import triages_refresh
from parity.models import FileGapCount, Gap, GapState, Outcome, Project, Triage
from parity.pure.run_manifest import FileRun
from tests.parity.engine.rows import backend_of, results_upload, run_at
from tests.parity.engine.test_absent_states import manifest_write

P, F = Outcome.PASSED, Outcome.FAILED
A = [f"test/test_a.py::T::t{n}" for n in range(4)]
B = [f"test/test_b.py::T::t{n}" for n in range(3)]
START = datetime.datetime(2026, 5, 1, tzinfo=datetime.UTC)


def recounted(project: Project) -> dict[tuple[str, str], tuple[int, int, int, int, int]]:
    """The counts from the open gaps, grouped here: what the heatmap read before the table."""
    lost = Q(state__in=INFRA_STATES, not_applicable=False)
    counted = Q(not_applicable=False) & ~Q(state__in=INFRA_STATES)
    queued_missing = Q(state=GapState.MISSING, tracked=False, intended=False, not_applicable=False)
    rows = (
        Gap.objects.filter(project=project, is_open=True)
        .exclude(state=GapState.REFERENCE_MISSING)
        .values_list("backend__name", "test__file")
        .annotate(
            n_gaps=Count("pk", filter=counted),
            n_intended=Count("pk", filter=counted & Q(intended=True)),
            n_not_applicable=Count("pk", filter=Q(not_applicable=True)),
            n_rerun=Count("pk", filter=lost),
            n_queue_missing=Count("pk", filter=queued_missing),
        )
        .order_by()
    )
    return {(backend, file): tuple(counts) for backend, file, *counts in rows}


def stored(project: Project) -> dict[tuple[str, str], tuple[int, int, int, int, int]]:
    """The table's counts, without the rows that fell to zero (the heatmap reads them so)."""
    rows = (
        FileGapCount.objects.filter(project=project)
        .exclude(gaps=0, intended=0, not_applicable=0, rerun=0, queue_missing=0)
        .values_list(
            "backend__name", "file", "gaps", "intended", "not_applicable", "rerun", "queue_missing"
        )
    )
    return {(backend, file): tuple(counts) for backend, file, *counts in rows}


def assert_counts_true(project: Project) -> None:
    assert stored(project) == recounted(project)


@pytest.mark.django_db
def test_file_gap_counts_follow_every_write_of_gaps(project):
    cpu = run_at(project, "cpu", START)
    results_upload(cpu, dict.fromkeys(A + B, P))
    parity_recompute(run=cpu)

    # tpu's first run: a.py's t0 fails, t1 is missing, b.py crashed.
    first = run_at(project, "tpu", START + datetime.timedelta(hours=1))
    results_upload(first, {A[0]: F, A[2]: P, A[3]: P})
    manifest_write(first, FileRun("test/test_b.py", signal="SIGSEGV"))
    parity_recompute(run=first)
    assert stored(project) == {
        ("tpu", "test/test_a.py"): (2, 0, 0, 0, 1),
        ("tpu", "test/test_b.py"): (0, 0, 0, 3, 0),
    }
    assert_counts_true(project)

    # The nightly: t0 passes now (a gap closes), b.py ran and one of its tests fails.
    nightly = run_at(project, "tpu", START + datetime.timedelta(days=1))
    results_upload(nightly, {A[0]: P, A[2]: P, A[3]: P, B[0]: P, B[1]: P, B[2]: F})
    parity_recompute(run=nightly)
    assert stored(project) == {
        ("tpu", "test/test_a.py"): (1, 0, 0, 0, 1),
        ("tpu", "test/test_b.py"): (1, 0, 0, 0, 0),
    }
    # Tracked, the missing t1 leaves the triage queue's count; untracked, it is back.
    Gap.objects.filter(test__name=A[1].rsplit("::", 1)[1], is_open=True).update(tracked=True)
    assert stored(project)[("tpu", "test/test_a.py")] == (1, 0, 0, 0, 0)
    Gap.objects.filter(test__name=A[1].rsplit("::", 1)[1], is_open=True).update(tracked=False)
    assert stored(project)[("tpu", "test/test_a.py")] == (1, 0, 0, 0, 1)

    # A late shard brings t1: a.py's last gap closes; its row stays, as zeros, unread.
    results_upload(nightly, {A[1]: P})
    parity_recompute(run=nightly)
    assert stored(project) == {("tpu", "test/test_b.py"): (1, 0, 0, 0, 0)}
    assert (
        FileGapCount.objects.filter(file="test/test_a.py").values_list("gaps", flat=True).get() == 0
    )

    # An exemption granted: the failing test is intended; then not applicable; then withdrawn.
    test = Gap.objects.get(is_open=True).test
    exemption = Triage.objects.create(project=project, test=test, kind="intended", note="x")
    triages_refresh(project=project)
    assert stored(project) == {("tpu", "test/test_b.py"): (1, 1, 0, 0, 0)}
    Triage.objects.filter(pk=exemption.pk).update(kind="not_applicable")
    triages_refresh(project=project)
    assert stored(project) == {("tpu", "test/test_b.py"): (0, 0, 1, 0, 0)}
    exemption.delete()
    triages_refresh(project=project)
    assert stored(project) == {("tpu", "test/test_b.py"): (1, 0, 0, 0, 0)}

    # The reference moves on: it fails b's t2 too (tpu's gap closes) and adds c.py, which tpu's
    # run, older, has pending rather than missing.
    moved = run_at(project, "cpu", START + datetime.timedelta(days=2))
    results_upload(moved, dict.fromkeys(A + B[:2], P) | {B[2]: F, "test/test_c.py::T::t0": P})
    parity_recompute(run=moved)
    assert_counts_true(project)
    assert stored(project) == {}

    # Gaps deleted outright (a backend's open gaps dropped, a project deleted): counts follow.
    tpu_next = run_at(project, "tpu", START + datetime.timedelta(days=3))
    results_upload(tpu_next, {A[0]: F})
    parity_recompute(run=tpu_next)
    assert_counts_true(project)
    assert stored(project) != {}
    Gap.objects.filter(backend=backend_of(project, "tpu"), is_open=True).delete()
    assert stored(project) == {}
    project.delete()
    assert not FileGapCount.objects.exists()


def flaky_stored(project: Project) -> dict[tuple[str, str], int]:
    rows = FileGapCount.objects.filter(project=project, flaky__gt=0)
    return {(b, f): n for b, f, n in rows.values_list("backend__name", "file", "flaky")}


def flaky_recounted(project: Project) -> dict[tuple[str, str], int]:
    """The open gaps that read flaky (``reads_flaky_q``), grouped here."""
    rows = (
        Gap.objects.filter(reads_flaky_q(), project=project, is_open=True)
        .values_list("backend__name", "test__file")
        .annotate(n=Count("pk"))
        .order_by()
    )
    return {(b, f): n for b, f, n in rows}


@pytest.mark.django_db
def test_the_flaky_count_follows_the_flaky_marks(project):
    """A cell's flaky count (the heatmap's marker) moves with each write of ``Gap.flaky``, as
    ``history.mark`` writes it (the flag alone), and with a triage a person makes over it."""
    cpu = run_at(project, "cpu", START)
    results_upload(cpu, dict.fromkeys(A + B, P))
    parity_recompute(run=cpu)
    tpu = run_at(project, "tpu", START + datetime.timedelta(hours=1))
    results_upload(tpu, {A[0]: F, A[1]: F, A[2]: P, A[3]: P, B[0]: F})
    parity_recompute(run=tpu)
    assert flaky_stored(project) == {}
    gaps = Gap.objects.filter(project=project, is_open=True)

    gaps.filter(test__key__in=[A[0], A[1], B[0]]).update(flaky=True)
    assert flaky_stored(project) == {("tpu", "test/test_a.py"): 2, ("tpu", "test/test_b.py"): 1}
    # Tracked, it reads tracked: no longer counted; untracked again, counted.
    gaps.filter(test__key=A[0]).update(tracked=True)
    assert flaky_stored(project) == {("tpu", "test/test_a.py"): 1, ("tpu", "test/test_b.py"): 1}
    gaps.filter(test__key=A[0]).update(tracked=False)
    gaps.filter(test__key=B[0]).update(flaky=False)
    assert flaky_stored(project) == {("tpu", "test/test_a.py"): 2}
    assert flaky_stored(project) == flaky_recounted(project)

    # The next run fixes A[0]: its gap closes and leaves the count.
    again = run_at(project, "tpu", START + datetime.timedelta(hours=2))
    results_upload(again, {A[0]: P, A[1]: F, A[2]: P, A[3]: P, B[0]: F})
    parity_recompute(run=again)
    assert flaky_stored(project) == {("tpu", "test/test_a.py"): 1}
    Gap.objects.filter(project=project, test__key=A[1]).delete()
    assert flaky_stored(project) == {} == flaky_recounted(project)
    assert_counts_true(project)
