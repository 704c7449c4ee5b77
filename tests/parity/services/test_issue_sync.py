"""The issue sync against the local fake GitHub and GitLab: which issues it reads, what it
stores, how it spreads reads over the sync period, and that rate limits, server errors and a
missing token leave every stored fact as it was."""

import datetime
import logging

import psycopg2
import pytest
from django.db import connection
from django.utils import timezone

from parity.engine.gap_triages import triages_refresh
from parity.models import BackendState, Gap, Lease, Snapshot, TrackingIssue, Triage
from parity.services import issue_sync
from parity.storage.leases import lease_held, lease_holder
from tests.fake_tracker import Scripted, github_issue, gitlab_issue
from tests.parity.engine.rows import current_set, gap_open, reason_of, run_make

A = "test/a.py::TestA::"
XLA = "pytorch/xla"


def url(number: int) -> str:
    return f"https://github.com/{XLA}/issues/{number}"


def cite(project, number: int, **fields) -> TrackingIssue:
    return TrackingIssue.objects.create(
        project=project, kind="github", key=f"{XLA}#{number}", url=url(number), **fields
    )


def skipped_citing(project, name: str, *issues: TrackingIssue, run) -> Gap:
    """An open tpu gap skipped for a reason citing ``issues``."""
    reason = reason_of(project, f"skip {name}")
    reason.issues.add(*issues)
    return gap_open(project, "tpu", f"{A}{name}", "skipped", run=run, reason=reason)


@pytest.fixture
def tpu_gaps(project):
    """tpu's current run against cpu's: gaps t1..t4, each skipped for its own reason."""
    cpu_run, tpu_run = run_make(project, "cpu"), run_make(project, "tpu")
    current_set(project, "cpu", {f"{A}t{n}": 1 for n in range(1, 6)}, run=cpu_run)
    current_set(project, "tpu", {f"{A}t5": 1}, run=tpu_run)
    return tpu_run


@pytest.fixture
def every_tick_reads_everything(settings):
    settings.PARITY_TRACKER_SYNC_SECONDS = 60
    settings.PARITY_TRACKER_SYNC_TICK_SECONDS = 60


def closed_flags() -> dict[str, bool]:
    return dict(Gap.objects.filter(is_open=True).values_list("test__name", "tracked_closed"))


def test_the_sync_stores_what_the_tracker_says_and_marks_gaps_citing_only_closed_issues(
    project, tpu_gaps, fake_tracker, every_tick_reads_everything
):
    fake_tracker.add_github(
        XLA,
        github_issue(
            9017,
            "XLA does not support complex64",
            state="closed",
            labels=["xla:tpu"],
            assignee="al",
        ),
    )
    fake_tracker.add_github(XLA, github_issue(9018, "Also closed", state="closed"))
    fake_tracker.add_github(XLA, github_issue(9019, "Still open"))
    closed, also_closed, still_open = cite(project, 9017), cite(project, 9018), cite(project, 9019)
    skipped_citing(project, "t1", closed, run=tpu_gaps)
    skipped_citing(project, "t2", closed, also_closed, run=tpu_gaps)
    skipped_citing(project, "t3", closed, still_open, run=tpu_gaps)
    skipped_citing(project, "t4", run=tpu_gaps)
    triages_refresh(project=project)
    assert closed_flags() == {"t1": False, "t2": False, "t3": False, "t4": False}

    report = issue_sync.issues_sync()

    stored = TrackingIssue.objects.get(pk=closed.pk)
    assert (stored.state, stored.title, stored.labels, stored.assignee) == (
        "closed",
        "XLA does not support complex64",
        ["xla:tpu"],
        "al",
    )
    assert stored.closed_at == datetime.datetime(2026, 3, 2, 10, tzinfo=datetime.UTC)
    assert stored.etag and stored.synced_at and stored.sync_error == ""
    assert TrackingIssue.objects.get(pk=still_open.pk).state == "open"
    assert closed_flags() == {"t1": True, "t2": True, "t3": False, "t4": False}
    snapshot = Snapshot.objects.get(pk=BackendState.objects.get(backend__name="tpu").snapshot_id)
    assert (snapshot.tracked, snapshot.tracked_closed, snapshot.untracked) == (3, 2, 1)
    assert (report.read, report.state_changes, report.projects_refreshed) == (3, 3, [project.pk])


def test_only_issues_an_open_gap_or_an_unexpired_exemption_cites_are_read(
    project, tpu_gaps, fake_tracker, every_tick_reads_everything
):
    for n in range(1, 7):
        fake_tracker.add_github(XLA, github_issue(n, f"issue {n}"))
    by_reason = cite(project, 1)
    by_triage, by_exemption, by_expired, by_fixed_gap = (cite(project, n) for n in (2, 3, 4, 5))
    cite(project, 6)  # cited by nothing
    skipped_citing(project, "t1", by_reason, run=tpu_gaps)
    fixed = skipped_citing(project, "t2", by_fixed_gap, run=tpu_gaps)
    Gap.objects.filter(pk=fixed.pk).update(is_open=False)
    gap = gap_open(project, "tpu", f"{A}t3", "failed", run=tpu_gaps)
    Triage.objects.create(project=project, test=gap.test, kind="tracked", issue=by_triage)
    Triage.objects.create(project=project, match="test/b.py", kind="tracked", issue=by_exemption)
    yesterday = timezone.now().date() - datetime.timedelta(days=1)
    Triage.objects.create(
        project=project, match="test/c.py", kind="tracked", issue=by_expired, expires_on=yesterday
    )
    triages_refresh(project=project)

    issue_sync.issues_sync()

    asked = sorted(int(seen.path.rsplit("/", 1)[1]) for seen in fake_tracker.requests)
    assert asked == [1, 2, 3]
    unread = TrackingIssue.objects.filter(synced_at__isnull=True)
    assert sorted(unread.values_list("key", flat=True)) == [f"{XLA}#{n}" for n in (4, 5, 6)]


def test_one_issue_cited_in_two_projects_is_read_once_for_both(
    project, tpu_gaps, fake_tracker, every_tick_reads_everything
):
    from parity.services.projects import project_create

    other = project_create(slug="other", backends=["cpu", "tpu"], reference="cpu")
    fake_tracker.add_github(XLA, github_issue(7, "Shared", state="closed"))
    mine, theirs = cite(project, 7), cite(other, 7)
    skipped_citing(project, "t1", mine, run=tpu_gaps)
    Triage.objects.create(project=other, match="test/x.py", kind="tracked", issue=theirs)

    issue_sync.issues_sync()

    assert len(fake_tracker.requests) == 1
    assert set(TrackingIssue.objects.values_list("state", flat=True)) == {"closed"}


def test_a_host_without_a_token_is_not_asked_and_the_log_says_so_once(
    project, tpu_gaps, fake_tracker, settings, caplog, every_tick_reads_everything
):
    settings.PARITY_TRACKER_TOKENS = {}
    issue_sync._told_no_token.discard("github.com")
    skipped_citing(project, "t1", cite(project, 1), run=tpu_gaps)

    with caplog.at_level(logging.WARNING, logger="parity.services.issue_sync"):
        first, second = issue_sync.issues_sync(), issue_sync.issues_sync()

    assert fake_tracker.requests == []
    assert first.no_token == second.no_token == ["github.com"]
    told = [r.getMessage() for r in caplog.records if "no token" in r.getMessage()]
    assert told == [
        "issue sync: no token for github.com in PARITY_TRACKER_TOKENS; its issues are not synced"
    ]
    assert TrackingIssue.objects.get().state == "unknown"


def test_a_second_read_is_conditional_and_a_304_changes_nothing_but_the_time(
    project, tpu_gaps, fake_tracker, every_tick_reads_everything
):
    fake_tracker.add_github(XLA, github_issue(1, "One", state="closed"))
    issue = cite(project, 1)
    skipped_citing(project, "t1", issue, run=tpu_gaps)
    first = timezone.now()
    issue_sync.issues_sync(now=first)
    quota = fake_tracker.quota

    report = issue_sync.issues_sync(now=first + datetime.timedelta(minutes=2))

    stored = TrackingIssue.objects.get(pk=issue.pk)
    assert fake_tracker.requests[-1].status == 304
    assert fake_tracker.quota == quota
    assert (report.unchanged, report.read, report.projects_refreshed) == (1, 0, [])
    assert (stored.state, stored.title) == ("closed", "One")
    assert stored.synced_at == first + datetime.timedelta(minutes=2)


def test_reads_spread_over_the_period_oldest_first(project, tpu_gaps, fake_tracker, settings):
    settings.PARITY_TRACKER_SYNC_SECONDS = 600
    settings.PARITY_TRACKER_SYNC_TICK_SECONDS = 120  # a fifth of the issues a tick
    now = timezone.now()
    issues = []
    for n in range(1, 11):
        fake_tracker.add_github(XLA, github_issue(n, f"issue {n}"))
        # Issues 1-8 were read 20 to 13 minutes ago; 9 and 10 never.
        read = None if n > 8 else now - datetime.timedelta(minutes=21 - n)
        issues.append(cite(project, n, synced_at=read))
    skipped_citing(project, "t1", *issues, run=tpu_gaps)

    issue_sync.issues_sync(now=now)
    issue_sync.issues_sync(now=now + datetime.timedelta(minutes=2))

    asked = [int(seen.path.rsplit("/", 1)[1]) for seen in fake_tracker.requests]
    assert asked == [9, 10, 1, 2]


def test_a_rate_limit_keeps_what_was_read_and_the_rest_waits_until_the_reset(
    project, tpu_gaps, fake_tracker, every_tick_reads_everything
):
    for n in (1, 2, 3):
        fake_tracker.add_github(XLA, github_issue(n, f"issue {n}", state="closed"))
    issues = [cite(project, n) for n in (1, 2, 3)]
    for issue in issues:
        skipped_citing(project, f"t{issue.pk}", issue, run=tpu_gaps)
    fake_tracker.script(
        Scripted(200, {}, github_issue(1, "issue 1", state="closed")),
        Scripted(403, {"Retry-After": "3600"}, {"message": "You have exceeded a rate limit"}),
    )

    limited = issue_sync.issues_sync()
    paused = issue_sync.issues_sync()

    assert "github.com" in limited.paused and "github.com" in paused.paused
    assert len(fake_tracker.requests) == 2  # the paused tick asked nothing
    states = dict(TrackingIssue.objects.values_list("key", "state"))
    assert states == {f"{XLA}#1": "closed", f"{XLA}#2": "unknown", f"{XLA}#3": "unknown"}
    assert sum(closed_flags().values()) == 1

    from django.core.cache import cache

    cache.clear()  # the hour has passed
    resumed = issue_sync.issues_sync()

    assert resumed.read == 2
    assert set(TrackingIssue.objects.values_list("state", flat=True)) == {"closed"}
    assert sum(closed_flags().values()) == 3


def test_a_server_error_loses_no_state_and_the_next_tick_recovers(
    project, tpu_gaps, fake_tracker, every_tick_reads_everything
):
    fake_tracker.add_github(XLA, github_issue(1, "Closed long ago", state="closed"))
    fake_tracker.add_github(XLA, github_issue(2, "Open"))
    closed, still_open = cite(project, 1), cite(project, 2)
    skipped_citing(project, "t1", closed, run=tpu_gaps)
    skipped_citing(project, "t2", still_open, run=tpu_gaps)
    start = timezone.now()
    issue_sync.issues_sync(now=start)
    assert closed_flags() == {"t1": True, "t2": False}
    synced = dict(TrackingIssue.objects.values_list("pk", "synced_at"))
    fake_tracker.script(Scripted(502, {}, {"message": "Bad gateway"}))

    failed = issue_sync.issues_sync(now=start + datetime.timedelta(minutes=2))

    assert "502" in failed.paused["github.com"]
    assert len(fake_tracker.requests) == 3  # one 502, then the host was left for this tick
    rows = {i.pk: i for i in TrackingIssue.objects.all()}
    assert (rows[closed.pk].state, rows[closed.pk].title) == ("closed", "Closed long ago")
    assert rows[still_open.pk].state == "open"
    assert {pk: i.synced_at for pk, i in rows.items()} == synced  # still due
    assert all("502" in i.sync_error for i in rows.values())
    assert closed_flags() == {"t1": True, "t2": False}

    issue_sync.issues_sync(now=start + datetime.timedelta(minutes=4))

    assert set(TrackingIssue.objects.values_list("sync_error", flat=True)) == {""}


def test_an_issue_reopened_at_the_tracker_is_tracked_again(
    project, tpu_gaps, fake_tracker, every_tick_reads_everything
):
    fake_tracker.add_github(XLA, github_issue(1, "Regressed", state="closed"))
    skipped_citing(project, "t1", cite(project, 1), run=tpu_gaps)
    start = timezone.now()
    issue_sync.issues_sync(now=start)
    assert closed_flags() == {"t1": True}

    fake_tracker.github[XLA, 1]["state"] = "open"
    fake_tracker.github[XLA, 1]["closed_at"] = None
    issue_sync.issues_sync(now=start + datetime.timedelta(minutes=2))

    assert closed_flags() == {"t1": False}
    assert TrackingIssue.objects.get().closed_at is None


def test_a_missing_issue_keeps_its_facts_and_says_why(
    project, tpu_gaps, fake_tracker, every_tick_reads_everything
):
    gone = cite(project, 404, state="closed", title="Known before")
    skipped_citing(project, "t1", gone, run=tpu_gaps)

    report = issue_sync.issues_sync()

    stored = TrackingIssue.objects.get(pk=gone.pk)
    assert (stored.state, stored.title, stored.sync_error) == (
        "closed",
        "Known before",
        "not found (404)",
    )
    assert stored.synced_at is not None and report.failed == 1


def test_gitlab_issues_are_read_in_batches(
    project, tpu_gaps, fake_tracker, every_tick_reads_everything
):
    path = "tpu/xla"
    issues = []
    for iid in range(1, 4):
        fake_tracker.add_gitlab(path, gitlab_issue(iid, f"gl {iid}", state="closed"))
        issues.append(
            TrackingIssue.objects.create(
                project=project,
                kind="gitlab",
                key=f"gitlab.example.com/{path}#{iid}",
                url=f"https://gitlab.example.com/{path}/-/issues/{iid}",
            )
        )
    skipped_citing(project, "t1", *issues, run=tpu_gaps)

    issue_sync.issues_sync()

    assert len(fake_tracker.requests) == 1
    assert set(TrackingIssue.objects.values_list("state", flat=True)) == {"closed"}
    assert closed_flags() == {"t1": True}


@pytest.mark.django_db(transaction=True)
def test_a_tick_while_another_sync_runs_does_nothing_and_says_so(project, fake_tracker, caplog):
    # The other sync holds the lease from another connection, as another worker would.
    other = psycopg2.connect(**connection.get_connection_params())
    other.autocommit = True
    try:
        with other.cursor() as cursor:
            cursor.execute(
                "INSERT INTO parity_lease (name, held_until, holder) "
                "VALUES ('issue-sync', now() + interval '1 minute', 'worker-b:42:0')"
            )
        with caplog.at_level(logging.INFO, logger="parity.services.issue_sync"):
            assert issue_sync.issues_sync().ran is False
        assert "another sync is running (worker-b:42:0)" in caplog.text
        with other.cursor() as cursor:  # that sync ends and gives the lease back
            cursor.execute("UPDATE parity_lease SET held_until = now()")
    finally:
        other.close()
    assert issue_sync.issues_sync().ran is True
    assert issue_sync.issues_sync().ran is True  # each sync gave it back


@pytest.mark.django_db(transaction=True)
def test_a_lease_whose_holder_died_lapses(project, fake_tracker):
    Lease.objects.create(
        name="issue-sync",
        held_until=timezone.now() - datetime.timedelta(seconds=1),
        holder="worker-gone:7:0",
    )
    assert issue_sync.issues_sync().ran is True


@pytest.mark.django_db(transaction=True)
def test_the_lease_does_not_depend_on_the_connection(project, fake_tracker):
    """Behind a transaction pooler each statement may run on another server connection: a
    lease taken on one and given back on another holds the same."""
    with lease_held(name="issue-sync", seconds=60) as held:
        assert held
        connection.close()  # the next statement runs on a new server connection
        assert issue_sync.issues_sync().ran is False
    assert lease_holder(name="issue-sync") is None
    assert issue_sync.issues_sync().ran is True
