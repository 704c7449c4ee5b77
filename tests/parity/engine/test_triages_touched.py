"""A run's recompute picks triages again only for the gaps its diff opened or gave another
reason, and marks stale triages from those (``triages_apply_touched``,
``triages_mark_stale_touched``): after every recompute of a sequence of nights that open, close
and re-reason gaps under shadowed, stale and expired triages, the full re-pick over every open
gap (``triages_refresh``, what a triage change runs) finds nothing to change."""

import datetime

import pytest

from parity.engine.gap_triages import triages_refresh
from parity.models import Gap, Project, Triage
from parity.models.projects import project_lock
from parity.services.triage import TriageRequest, triage_create

F = "test/test_ops.py::TestOps::"
G = "test/test_nn.py::TestNN::"
REFERENCE = {f"{F}test_{n}": "passed" for n in range(6)} | {
    f"{G}test_{n}": "passed" for n in range(3)
}


def _state(project: Project) -> tuple[dict, dict]:
    gaps = Gap.objects.filter(project=project, is_open=True).values_list(
        "test__key", "backend__name", "state", "triage_id", "tracked", "intended", "tracked_closed"
    )
    triages = Triage.objects.filter(project=project).values_list("pk", "stale", "expired")
    return (
        {(key, backend): rest for key, backend, *rest in gaps},
        {pk: (stale, expired) for pk, stale, expired in triages},
    )


def _full_pick_changes_nothing(project: Project) -> None:
    before = _state(project)
    triages_refresh(project=project_lock(project_id=project.pk))
    assert _state(project) == before


def _triage(project: Project, **request) -> Triage:
    return triage_create(project=project, request=TriageRequest(**request))


@pytest.mark.django_db
def test_the_touched_gaps_pick_what_a_full_pick_would(xla, upload_run):
    project = xla
    tpu = {
        f"{F}test_0": ("skipped", "needs TPU v5e, see https://github.com/pytorch/xla/issues/12"),
        f"{F}test_1": ("failed", "RuntimeError: mismatch"),
        f"{F}test_2": ("skipped", "not supported"),
        f"{G}test_0": "passed",
    }  # test_3..5 of F, test_1..2 of G: missing
    upload_run("cpu", REFERENCE, day="2026-03-01")
    upload_run("tpu", tpu, day="2026-03-01")
    gap = {key: pk for key, pk in Gap.objects.filter(is_open=True).values_list("test__key", "pk")}
    _triage(project, kind="intended", match="test/test_ops.py", backend="tpu", note="no ops")
    _triage(
        project,
        kind="tracked",
        gap=gap[f"{F}test_1"],
        issue_url="https://github.com/pytorch/xla/issues/7",
    )
    _triage(project, kind="intended", match=f"{G}test_1", note="one test")
    gone = _triage(project, kind="intended", gap=gap[f"{F}test_3"], note="about to pass")
    expired = _triage(project, kind="intended", match=f"{G}test_2", note="until yesterday")
    Triage.objects.filter(pk=expired.pk).update(
        expires_on=datetime.date.today() - datetime.timedelta(days=1)
    )
    triages_refresh(project=project_lock(project_id=project.pk))  # what the expiry task runs
    _full_pick_changes_nothing(project)

    # Night 2: test_3 passes (its test triage goes stale), test_0 gets another reason, G's
    # test_0 now skips (a new gap under no triage), test_2 of F is missing now.
    tpu2 = dict(tpu)
    tpu2[f"{F}test_3"] = "passed"
    tpu2[f"{F}test_0"] = ("skipped", "needs TPU v6")
    tpu2[f"{G}test_0"] = ("skipped", "flaky on TPU")
    del tpu2[f"{F}test_2"]
    upload_run("tpu", tpu2, day="2026-03-02")
    assert Triage.objects.get(pk=gone.pk).stale
    _full_pick_changes_nothing(project)

    # Night 3: the reference gains a test the file exemption covers; test_3 fails again, so
    # its stale triage matches a gap once more.
    upload_run("cpu", REFERENCE | {f"{F}test_9": "passed"}, day="2026-03-03")
    tpu3 = dict(tpu2)
    tpu3[f"{F}test_3"] = ("failed", "RuntimeError: again")
    upload_run("tpu", tpu3, day="2026-03-03")
    assert not Triage.objects.get(pk=gone.pk).stale
    _full_pick_changes_nothing(project)


@pytest.mark.django_db
def test_a_stale_triage_a_returning_gap_matches_but_does_not_pick_wakes(xla, upload_run):
    # A tracked triage under a file exemption (intended wins): it covers the gap without
    # being picked. When the test passes both go stale; when it fails again, only matching the
    # returning gap against the stale triages can tell the tracked one covers a gap again.
    project, failing = xla, f"{F}test_0"
    upload_run("cpu", REFERENCE, day="2026-03-01")
    upload_run("tpu", REFERENCE | {failing: ("failed", "RuntimeError")}, day="2026-03-01")
    shadowed = _triage(  # on tpu only: gpu and neuron have not run, so it would await them
        project,
        kind="tracked",
        match=failing,
        backend="tpu",
        issue_url="https://github.com/pytorch/xla/issues/7",
    )
    _triage(project, kind="intended", match="test/test_ops.py", backend="tpu", note="no ops")
    _full_pick_changes_nothing(project)

    upload_run("tpu", REFERENCE, day="2026-03-02")
    assert Triage.objects.filter(project=project, stale=True).count() == 2

    upload_run("tpu", REFERENCE | {failing: ("failed", "RuntimeError")}, day="2026-03-03")
    assert not Triage.objects.get(pk=shadowed.pk).stale
    _full_pick_changes_nothing(project)
