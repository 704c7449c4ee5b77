"""A compare view's kept judgement (``parity.services.compare_rows``): a save computes it, its rows
are the report computed from the window's results, a run of either variant computes it again
through the task queued after its recompute (a run of another backend does not), and the
debounce computes at most once per interval, queuing one later refresh for the runs between."""

import datetime

import pytest
from django.utils import timezone

from parity.models import Backend, CompareRow, CompareView
from parity.result_reads import compare_report
from parity.selectors import compare_kept
from parity.services.compare_rows import (
    compare_refresh_plan,
    compare_view_refresh,
    compare_views_due,
)
from parity.services.compare_views import CompareRequest, compare_view_create
from tests.parity.compare_scenario import FAIL, T, compare_upload, small_history
from tests.parity.conftest import commit_of, run_xml

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded(xla, ingest, eager_errors_propagate):
    compare_upload(ingest, small_history())
    return compare_view_create(
        project=xla,
        request=CompareRequest(
            name="tpu-vs-cpu",
            sample=Backend.objects.get(project=xla, name="tpu"),
            basis=Backend.objects.get(project=xla, name="cpu"),
        ),
    )


def _kept(view) -> list[tuple]:
    return [
        (r.test_id, r.state.value, r.sample, r.basis, r.judgement.p, r.sentence)
        for r in compare_kept(view=view).rows
    ]


def _computed(view) -> list[tuple]:
    return [
        (r.test_id, r.state.value, r.sample, r.basis, r.judgement.p, r.sentence)
        for r in compare_report(view=view).rows
    ]


def _send(ingest, backend: str, cases: dict, at: datetime.datetime) -> None:
    stamp = at.strftime("%Y-%m-%dT%H:%M:%SZ")
    response = ingest(
        ("results.xml", run_xml(cases)),
        backend=backend,
        commit=commit_of(stamp, backend),
        branch="master",
        run=f"late-{stamp}-{backend}",
        complete="true",
        timestamp=stamp,
    )
    assert response.status_code in (200, 202), response.content


def test_a_save_keeps_the_report_the_window_gives(seeded):
    view = CompareView.objects.get(pk=seeded.pk)
    assert view.computed_at is not None and view.refresh_due_at is None
    assert _kept(view) == _computed(view)  # every row, in the report's order, with its sentence
    assert (view.sample_runs, view.basis_runs) == (13, 13)
    assert sum(view.state_counts.values()) == CompareRow.objects.filter(view=view).count() == 4


def test_a_run_of_a_variant_computes_the_view_again_and_another_backend_does_not(
    seeded, ingest, eager_errors_propagate
):
    hour_ago = timezone.now() - datetime.timedelta(hours=1)
    CompareView.objects.filter(pk=seeded.pk).update(computed_at=hour_ago)
    steady = T.format("steady")
    before = CompareRow.objects.get(view=seeded, test__key=steady)
    assert before.sample_failed == 0

    _send(ingest, "neuron", {steady: FAIL}, timezone.now() - datetime.timedelta(minutes=30))
    assert CompareView.objects.get(pk=seeded.pk).computed_at == hour_ago  # not its variant

    _send(ingest, "tpu", {steady: FAIL}, timezone.now() - datetime.timedelta(minutes=20))
    view = CompareView.objects.get(pk=seeded.pk)
    assert view.computed_at > hour_ago and view.sample_runs == 14
    after = CompareRow.objects.get(view=view, test__key=steady)
    assert (after.sample_passed, after.sample_failed) == (13, 1)
    assert _kept(view) == _computed(view)


def test_runs_closer_than_the_interval_wait_for_one_later_refresh(seeded, settings):
    settings.PARITY_COMPARE_REFRESH_SECONDS = 300
    gap = datetime.timedelta(seconds=300)
    t0 = timezone.now()
    CompareView.objects.filter(pk=seeded.pk).update(computed_at=t0, refresh_due_at=None)
    project, tpu, cpu = seeded.project_id, seeded.sample_id, seeded.basis_id

    def plan(backend, at):
        return compare_refresh_plan(project_id=project, backend_id=backend, now=at)

    def due():
        return CompareView.objects.get(pk=seeded.pk).refresh_due_at

    # A run a minute after the last computation: one refresh, when the interval has passed.
    first = plan(tpu, t0 + datetime.timedelta(minutes=1))
    assert (first.now, first.later) == ([], [(seeded.pk, t0 + gap)]) and due() == t0 + gap
    # The next runs, of either variant, find it queued: nothing more.
    for minute, backend in ((2, cpu), (3, tpu), (4, tpu)):
        nothing = plan(backend, t0 + datetime.timedelta(minutes=minute))
        assert (nothing.now, nothing.later) == ([], []), minute
    # The queued refresh runs; a run right after it waits for the next interval.
    compare_view_refresh(view=CompareView.objects.get(pk=seeded.pk), now=t0 + gap)
    assert due() is None
    again = plan(tpu, t0 + gap + datetime.timedelta(minutes=1))
    assert again.later == [(seeded.pk, t0 + 2 * gap)]
    compare_view_refresh(view=CompareView.objects.get(pk=seeded.pk), now=t0 + 2 * gap)

    # Past the interval: computed at once; a run while that is under way queues one more.
    late = t0 + 4 * gap
    now = plan(cpu, late)
    assert (now.now, now.later) == ([seeded.pk], [])
    during = plan(tpu, late + datetime.timedelta(seconds=5))
    assert during.later == [(seeded.pk, late + datetime.timedelta(seconds=5) + gap)]

    # Beat: a queued refresh overdue by another interval (its message lost) is computed.
    assert compare_views_due(now=late + datetime.timedelta(seconds=5) + gap) == []
    assert compare_views_due(now=late + 3 * gap) == [seeded.pk]


def test_a_view_changed_while_it_was_read_keeps_the_save_s_rows(seeded):
    stale = CompareView.objects.get(pk=seeded.pk)
    CompareView.objects.filter(pk=seeded.pk).update(tolerance=90.0)
    assert compare_view_refresh(view=stale) is False  # the save of those settings keeps its own


def test_without_a_broker_the_queued_refresh_runs_at_once_and_every_run_is_read(
    seeded, ingest, eager_errors_propagate
):
    # Eager Celery (a laptop, the demo) runs a task queued for later at once: each run inside
    # the interval is still read, and no refresh is left marked as queued.
    steady = T.format("steady")
    for minutes in (40, 30):
        _send(ingest, "tpu", {steady: FAIL}, timezone.now() - datetime.timedelta(minutes=minutes))
    view = CompareView.objects.get(pk=seeded.pk)
    assert view.refresh_due_at is None and view.sample_runs == 15
    row = CompareRow.objects.get(view=view, test__key=steady)
    assert (row.sample_passed, row.sample_failed) == (13, 2)
