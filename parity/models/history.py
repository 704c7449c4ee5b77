"""States from history (issue 46): each (backend, test) the engine follows over a window of
runs, its outcomes there and the state they make (``parity.pure.history_states``). A test is
followed from its first failure in the window and forgotten once its window holds no failure
and no state: a backend whose tests pass keeps no row, so a run's step touches the few tests
that failed lately, not every test (``parity.engine.history``)."""

from django.contrib.postgres.fields import ArrayField
from django.db import models

from parity.models.parity import ROLLUP_KEY


class HistoryState(models.TextChoices):
    NONE = "", "none"  # the current run decides
    FLAKY = "flaky", "flaky"
    BROKEN = "broken", "broken"


class TestHistory(models.Model):
    """A (backend, test)'s window: ``outcomes`` (``P``/``F``, oldest first) of its runs since
    the engine began to follow it, with each run's ``commits`` and ``ats`` beside;
    ``passes_before``: the passing runs the window held before its first entry. ``state`` since
    ``since``; ``runs``, ``failures``, ``flips`` and ``rank`` (the Wilson lower bound of its
    failure rate) as the last run judged them."""

    __test__ = False

    project = models.ForeignKey("Project", **ROLLUP_KEY, db_index=False)
    backend = models.ForeignKey("Backend", **ROLLUP_KEY, db_index=False)
    test = models.ForeignKey("TestCase", **ROLLUP_KEY, db_index=False)
    outcomes = models.TextField(default="")
    commits = ArrayField(models.CharField(max_length=64), default=list)
    ats = ArrayField(models.DateTimeField(), default=list)
    passes_before = models.PositiveIntegerField(default=0)
    state = models.CharField(max_length=10, choices=HistoryState.choices, default="", blank=True)
    since = models.DateTimeField(null=True, blank=True)
    runs = models.PositiveIntegerField(default=0)
    failures = models.PositiveIntegerField(default=0)
    flips = models.PositiveIntegerField(default=0)
    rank = models.FloatField(default=0.0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["backend", "test"], name="test_history_one"),
        ]
        indexes = [
            models.Index(
                fields=["project", "state"], condition=~models.Q(state=""), name="history_state"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.backend_id}/{self.test_id} {self.state or 'none'} {self.outcomes[-20:]}"


class FlakyChange(models.Model):
    """A test entering (``entered``) or leaving flaky on a backend with a run (the run whose
    outcome moved its window), and its window's ``rank`` then: what the digest's flaky section
    and the ``flaky_tests`` webhook list. Written by ``parity.engine.history`` once per run
    (a late shard or a rebuild moves no window); a window keeps no past, so this is where a test
    that left flaky, or was forgotten, is still seen."""

    project = models.ForeignKey("Project", **ROLLUP_KEY, db_index=False)
    backend = models.ForeignKey("Backend", **ROLLUP_KEY, db_index=False)
    test = models.ForeignKey("TestCase", **ROLLUP_KEY, db_index=False)
    run = models.ForeignKey("Run", **ROLLUP_KEY)
    at = models.DateTimeField()
    entered = models.BooleanField()
    rank = models.FloatField(default=0.0)

    class Meta:
        indexes = [models.Index(fields=["project", "at"], name="flaky_change_at")]

    def __str__(self) -> str:
        return f"{self.backend_id}/{self.test_id} {'entered' if self.entered else 'left'} flaky"
