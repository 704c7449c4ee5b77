"""The triage queue's selectors: untracked open gaps grouped by (backend, file) and (backend,
reason), largest first, in a fixed number of queries whatever the history; each backend's
headline; the burn-down from the snapshots. Expected groups are counted here from the Gap rows,
not by the selector's SQL."""

import datetime
from collections import Counter, defaultdict

import pytest
from django.utils import timezone

from parity import selectors
from parity.models import Gap, GapState, Project
from parity.services.triage import TriageRequest, triages_create
from tests.parity.dashboard_scenario import NEURON, B, upload_history, upload_older_day


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


def test_the_queue_groups_untracked_gaps_in_five_queries(xla_runs, django_assert_num_queries):
    # Two GROUP BYs, the owners of each page's groups, and the file rules.
    with django_assert_num_queries(5):
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
    with django_assert_num_queries(5):
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
    with django_assert_num_queries(2):
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
