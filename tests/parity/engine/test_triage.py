"""The engine's triage steps alone, on gaps and triages made with the ORM: which triage each
open gap gets (and so tracked/intended), and which triages no open gap matches."""

from parity.engine.triage import triages_apply, triages_mark_stale
from parity.models import Gap, TrackingIssue, Triage
from tests.parity.engine.rows import backend_of, gap_open, reason_of, run_make

A = "test/a.py::TestA::"


def apply(project) -> dict[str, tuple[int | None, bool, bool]]:
    triages_apply(project_id=project.pk, backend_ids=[b.pk for b in project.backends.all()])
    gaps = Gap.objects.filter(is_open=True).order_by("test__name")
    return {g.test.name: (g.triage_id, g.tracked, g.intended) for g in gaps}


def issue(project, n: int = 1) -> TrackingIssue:
    return TrackingIssue.objects.create(project=project, kind="github", key=f"pytorch/xla#{n}")


def test_each_gap_gets_the_most_specific_triage_intended_first(project):
    run = run_make(project, "tpu")
    later = reason_of(project, "later")
    odd = reason_of(project, "odd")
    for name in ("t1", "t2", "t3"):
        gap_open(project, "tpu", f"{A}{name}", "skipped", run=run, reason=later)
    gap_open(project, "tpu", f"{A}t4", "skipped", run=run, reason=odd)
    tpu = backend_of(project, "tpu")
    t2, t3, t4 = (Gap.objects.get(test__name=n).test for n in ("t2", "t3", "t4"))
    on_reason = Triage.objects.create(
        project=project, reason=later, kind="tracked", issue=issue(project)
    )
    on_t2 = Triage.objects.create(project=project, test=t2, kind="intended", note="by design")
    on_t3 = Triage.objects.create(
        project=project, backend=tpu, test=t3, kind="tracked", issue=issue(project, 2)
    )
    # Intended wins over a more specific tracked triage.
    Triage.objects.create(
        project=project, backend=tpu, test=t4, kind="tracked", issue=issue(project, 3)
    )
    on_t4 = Triage.objects.create(
        project=project, reason=odd, backend=tpu, kind="intended", note="x"
    )

    assert apply(project) == {
        "t1": (on_reason.pk, True, False),
        "t2": (on_t2.pk, False, True),
        "t3": (on_t3.pk, True, False),
        "t4": (on_t4.pk, False, True),
    }


def test_a_gap_is_tracked_by_its_reasons_issue_without_a_triage(project):
    run = run_make(project, "tpu")
    linked, bare = reason_of(project, "see #1"), reason_of(project, "later")
    gap_open(project, "tpu", f"{A}t1", "skipped", run=run, reason=linked)
    gap_open(project, "tpu", f"{A}t2", "skipped", run=run, reason=bare)
    assert apply(project) == {"t1": (None, False, False), "t2": (None, False, False)}

    linked.issues.add(issue(project))
    assert apply(project) == {"t1": (None, True, False), "t2": (None, False, False)}


def test_a_triage_no_open_gap_matches_is_stale_until_one_does(project):
    run = run_make(project, "tpu")
    gap = gap_open(project, "tpu", f"{A}t1", "skipped", run=run)
    other = gap_open(project, "tpu", f"{A}t2", "skipped", run=run)
    matched = Triage.objects.create(project=project, test=gap.test, kind="intended", note="x")
    Gap.objects.filter(pk=other.pk).update(is_open=False)
    stale = Triage.objects.create(project=project, test=other.test, kind="intended", note="x")
    gpu_only = Triage.objects.create(
        project=project,
        backend=backend_of(project, "gpu"),
        test=gap.test,
        kind="intended",
        note="x",
    )

    triages_mark_stale(project_id=project.pk)
    assert dict(Triage.objects.values_list("pk", "stale")) == {
        matched.pk: False,
        stale.pk: True,
        gpu_only.pk: True,  # the gap is on tpu
    }

    Gap.objects.filter(pk=other.pk).update(is_open=True)
    triages_mark_stale(project_id=project.pk)
    assert Triage.objects.get(pk=stale.pk).stale is False
