"""The overview's trend and burn-down read one snapshot per backend per day
(``parity.selectors.snapshot_days``): on a seeded history of many runs a day they give what
reading every snapshot in the window and keeping each day's last gave."""

import datetime
import random
from collections import defaultdict

import pytest

from parity import selectors
from parity.models import Project, Run, Snapshot
from parity.selectors.fragments import headline_score

NOW = datetime.datetime(2026, 6, 30, 15, 30, tzinfo=datetime.UTC)


@pytest.fixture
def history(project) -> Project:
    """Ten days of 0-6 runs a day per backend at random times (two at the same instant, so
    the primary key breaks the tie), each with a snapshot of random numbers."""
    rng = random.Random(11)
    for backend in project.backends.all():
        for day in range(10):
            moments = sorted(
                NOW - datetime.timedelta(days=day, minutes=rng.randrange(24 * 60))
                for _ in range(rng.randrange(7))
            )
            if moments:
                moments.append(moments[-1])
            for n, at in enumerate(moments):
                run = Run.objects.create(
                    project=project,
                    backend=backend,
                    key=f"{backend.name}-{day}-{n}",
                    commit="c" * 40,
                    branch="main",
                    complete=True,
                    started_at=at,
                )
                passing = rng.randrange(50, 100)
                Snapshot.objects.create(
                    project=project,
                    backend=backend,
                    run=run,
                    at=at,
                    score=passing / 100,
                    passing=passing,
                    reference_passing=100,
                    reference_tests=100,
                    untracked=rng.randrange(40),
                    test_count=100,
                )
    return project


def _days_last(project: Project, since: datetime.datetime) -> dict[tuple[str, datetime.date], int]:
    """What the old queries did: every snapshot of the window, the day's last winning."""
    last = {}
    snapshots = Snapshot.objects.filter(project=project, at__gte=since).order_by("at", "pk")
    for s in snapshots.select_related("backend"):
        last[s.backend.name, s.at.date()] = s.pk
    return last


@pytest.mark.parametrize("days", [3, 7, 30])  # windows starting mid-day, and past the history
def test_the_trend_is_each_days_last_snapshot(history, days, django_assert_num_queries):
    since = NOW - datetime.timedelta(days=days, hours=5)
    expected: dict[str, dict[str, list]] = defaultdict(lambda: {"at": [], "score": []})
    wanted = _days_last(history, since)
    for pk in sorted(wanted.values(), key=lambda pk: Snapshot.objects.get(pk=pk).at):
        s = Snapshot.objects.select_related("backend").get(pk=pk)
        score = headline_score(s, history.score_settings())
        expected[s.backend.name]["at"].append(s.at.isoformat())
        expected[s.backend.name]["score"].append(round(score, 4))
    with django_assert_num_queries(1):
        trends = selectors.score_trends(since=since, projects=[history])
    assert trends[history.slug] == dict(expected)
    points = sum(len(series["at"]) for series in trends[history.slug].values())
    assert points == len(wanted) < Snapshot.objects.filter(at__gte=since).count()


def test_the_burndown_is_each_days_last_snapshot_but_the_references(history):
    since = NOW - datetime.timedelta(days=6, hours=20)
    untracked = dict(Snapshot.objects.values_list("pk", "untracked"))
    expected: dict[str, list] = defaultdict(list)
    for (backend, day), pk in sorted(_days_last(history, since).items()):
        if backend != "cpu":  # the reference
            expected[backend].append((day, untracked[pk]))
    (burndown,) = selectors.untracked_burndown(projects=[history], since=since).values()
    assert burndown.series == dict(expected)
    assert burndown.days == sorted({day for points in expected.values() for day, _ in points})


def test_a_snapshot_recounted_after_its_day_moves_its_point(history):
    """The roll-up points at snapshots, it copies nothing: a triage's recount shows."""
    since = NOW - datetime.timedelta(days=11)
    (burndown,) = selectors.untracked_burndown(projects=[history], since=since).values()
    day, before = burndown.series["gpu"][-1]
    newest = Snapshot.objects.filter(backend__name="gpu").order_by("-at", "-pk").first()
    Snapshot.objects.filter(pk=newest.pk).update(untracked=before + 100)
    (burndown,) = selectors.untracked_burndown(projects=[history], since=since).values()
    assert burndown.series["gpu"][-1] == (day, before + 100)
