"""The triage queue's selectors: untracked open gaps grouped by (backend, file) and (backend,
reason), largest first, in a fixed number of queries whatever the history; each backend's
headline; the burn-down from the snapshots. Expected groups are counted here from the Gap rows,
not by the selector's SQL."""

import datetime
from collections import Counter, defaultdict

import pytest
from django.utils import timezone

from parity import selectors
from parity.models import Gap, GapState, Project, Reason
from parity.services.triage import TriageRequest, triage_delete, triages_create
from tests.parity.dashboard_scenario import (
    DAY2,
    ISSUE_URL,
    NEURON,
    TODAY,
    A,
    B,
    C,
    runs_by_day,
    tid,
    upload_history,
    upload_older_day,
)


@pytest.fixture
def xla_runs(upload_run, xla) -> Project:
    upload_history(upload_run)
    return xla


def untracked_rows(project: Project) -> list[Gap]:
    return [
        gap
        for gap in Gap.objects.filter(project=project, is_open=True).select_related(
            "backend", "test", "reason"
        )
        if not gap.tracked and not gap.intended and gap.state != GapState.REFERENCE_MISSING
    ]


def expected_groups(project: Project, key) -> list[tuple]:
    """(backend, what, gaps, state mix, first seen) per group, largest first, from Gap rows."""
    groups = defaultdict(list)
    for gap in untracked_rows(project):
        what = key(gap)
        if what is not None:
            groups[(gap.backend.name, what)].append(gap)
    rows = [
        (backend, what, len(gaps), Counter(g.state for g in gaps), min(g.opened_at for g in gaps))
        for (backend, what), gaps in groups.items()
    ]
    return sorted(rows, key=lambda r: (-r[2], r[0], r[1]))


def shown(groups, what) -> list[tuple]:
    """The selector's groups in ``expected_groups``' shape."""
    return [(g.backend, what(g), g.gaps, mix(g), g.first_seen) for g in groups]


def mix(g) -> Counter:
    counts = {"missing": g.missing, "skipped": g.skipped, "failed": g.failed, "error": g.error}
    return Counter({state: n for state, n in counts.items() if n})


def test_the_queue_groups_untracked_gaps_in_six_queries(xla_runs, django_assert_num_queries):
    # A page of each grouping, the owners of each page's groups, the file rules, and the
    # headlines stored on the snapshots.
    with django_assert_num_queries(6):
        queue = selectors.triage_queue(project=xla_runs)

    by_file = expected_groups(xla_runs, lambda g: g.test.file)
    assert shown(queue.by_file.groups, lambda g: g.file) == by_file
    assert by_file[0][:3] == ("neuron", B, 4)  # three tests neuron never ran, one skipped
    by_reason = expected_groups(xla_runs, lambda g: g.reason_id)  # ties: by reason id
    assert shown(queue.by_reason.groups, lambda g: g.reason_id) == by_reason
    assert (queue.by_file.total, queue.by_reason.total) == (len(by_file), len(by_reason))
    assert queue.untracked == len(untracked_rows(xla_runs)) == 7


def test_the_queue_pages_its_groups_and_filters_a_backend(
    xla_runs, upload_run, django_assert_num_queries
):
    upload_older_day(upload_run)  # more history: the same count of queries
    with django_assert_num_queries(6):
        second = selectors.triage_queue(project=xla_runs, file_page=2, per_page=2)
    everything = selectors.triage_queue(project=xla_runs)
    assert second.by_file.groups == everything.by_file.groups[2:4]
    assert (second.by_file.number, second.by_file.pages, second.by_file.total) == (2, 2, 4)
    assert second.by_file.has_previous and not second.by_file.has_next
    past_the_end = selectors.triage_queue(project=xla_runs, file_page=9, per_page=2)
    assert past_the_end.by_file.number == 1

    neuron = selectors.triage_queue(project=xla_runs, backend="neuron")
    assert [(g.file, g.missing, g.skipped) for g in neuron.by_file.groups] == [(B, 3, 1)]
    assert [g.reason for g in neuron.by_reason.groups] == [NEURON]
    assert [h.backend for h in neuron.headlines] == ["neuron"]


def test_headlines_say_what_each_backend_never_ran(xla_runs, django_assert_num_queries):
    with django_assert_num_queries(1):
        (headlines,) = selectors.triage_headlines(projects=[xla_runs]).values()
    neuron = {h.backend: h for h in headlines}["neuron"]
    # neuron: 3 tests in 1 file never run; 1 untracked reason.
    assert (neuron.never_run, neuron.never_run_files, neuron.reasons) == (3, 1, 1)
    assert neuron.untracked == 4
    rows = untracked_rows(xla_runs)
    assert sum(h.untracked for h in headlines) == len(rows)
    assert {h.backend for h in headlines} == {g.backend.name for g in rows}


def test_an_exempted_group_leaves_the_queue_and_its_headline(xla_runs):
    request = TriageRequest(kind="intended", backend="neuron", match=B, note="no such op")
    triages_create(project=xla_runs, requests=[request])

    queue = selectors.triage_queue(project=xla_runs)
    assert ("neuron", B) not in {(g.backend, g.file) for g in queue.by_file.groups}
    assert "neuron" not in {h.backend for h in queue.headlines}
    assert queue.untracked == 7 - 4


def live_headlines(project: Project) -> list[tuple]:
    """(backend, untracked, never run, their files, reasons) counted here from the Gap rows."""
    by_backend = defaultdict(list)
    for gap in untracked_rows(project):
        if not gap.not_applicable:
            by_backend[gap.backend.name].append(gap)
    rows = []
    for name, gaps in sorted(by_backend.items()):
        never_run = [g for g in gaps if g.state == GapState.MISSING]
        files = {g.test.file for g in never_run}
        reasons = {g.reason_id for g in gaps if g.reason_id}
        rows.append((name, len(gaps), len(never_run), len(files), len(reasons)))
    return rows


def stored_headlines(project: Project) -> list[tuple]:
    headlines = selectors.triage_headlines(projects=[project]).get(project.pk, [])
    return [(h.backend, h.untracked, h.never_run, h.never_run_files, h.reasons) for h in headlines]


def test_stored_headlines_hold_through_recomputes_and_triage_changes(xla_runs, upload_run):
    # The engine's snapshots carry the headlines: each write that moves a gap in or out of
    # the queue (a run, an exemption granted or deleted, a reason tracked) recounts them.
    assert stored_headlines(xla_runs) == live_headlines(xla_runs)
    assert ("neuron", 4, 3, 1, 1) in stored_headlines(xla_runs)

    exempt = TriageRequest(kind="intended", backend="neuron", match=tid(B, 2), note="no op")
    (triage,) = triages_create(project=xla_runs, requests=[exempt])
    assert ("neuron", 3, 2, 1, 1) in stored_headlines(xla_runs)
    reason = Reason.objects.get(project=xla_runs, text=NEURON).pk
    tracked = TriageRequest(kind="tracked", reason=reason, issue_url=ISSUE_URL)
    triages_create(project=xla_runs, requests=[tracked])
    assert ("neuron", 2, 2, 1, 0) in stored_headlines(xla_runs)
    assert stored_headlines(xla_runs) == live_headlines(xla_runs)

    triage_delete(triage=triage)
    assert ("neuron", 3, 3, 1, 0) in stored_headlines(xla_runs)

    # A new night: neuron runs test_b and skips test_a's a4 instead; gpu runs nothing of test_c.
    day3 = str(TODAY)
    nights = runs_by_day()[DAY2]
    neuron = {**nights["neuron"], **{tid(B, n): "passed" for n in (1, 2, 3, 4)}}
    del neuron[tid(A, 4)]
    gpu = {k: v for k, v in nights["gpu"].items() if not k.startswith(C)}
    for backend, cases in {**nights, "neuron": neuron, "gpu": gpu}.items():
        upload_run(backend, cases, day=day3)
    assert stored_headlines(xla_runs) == live_headlines(xla_runs)
    assert ("neuron", 1, 1, 1, 0) in stored_headlines(xla_runs)
    assert ("gpu", 3, 2, 1, 1) in stored_headlines(xla_runs)  # a2 failed; c1, c2 not run


def test_the_burndown_reads_each_days_last_snapshot(xla_runs, django_assert_num_queries):
    since = timezone.now() - datetime.timedelta(days=30)
    with django_assert_num_queries(1):
        (burndown,) = selectors.untracked_burndown(projects=[xla_runs], since=since).values()
    assert set(burndown.series) == {"gpu", "neuron", "tpu"}  # not the reference
    assert len(burndown.days) == 2
    current = {
        h.backend: h.untracked for h in selectors.triage_headlines(projects=[xla_runs])[xla_runs.pk]
    }
    assert {name: points[-1][1] for name, points in burndown.series.items()} == current
