"""Roll-up tables of the parity engine (``parity/engine/``): what pages and the API read.

Everything here is derived from results and recomputed when a run completes, except ``Triage``,
which maintainers write. Pages never aggregate raw results: they read these rows, whose number
depends on the size of the current runs, not on the length of history (except the per-run
``Snapshot``, per-day ``ReasonDaily`` and closed ``Gap``/``GapEvent`` rows, read by date).
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone


class GapState(models.TextChoices):
    SKIPPED = "skipped"
    FAILED = "failed"
    ERROR = "error"
    MISSING = "missing"  # passes on the reference, absent from the backend's run
    # Absent too, but the backend's CI was told to run the test's file (the run manifest,
    # ``parity.models.RunFile``), which says why nothing came back.
    CRASHED = "crashed"  # killed by a signal, or a non-zero exit without a report
    TIMED_OUT = "timed_out"
    EMPTY = "empty"  # the file ran and reported no test
    NOT_RUN = "not_run"  # in the job's list, never started (a lost shard)
    # Its file reported far fewer tests than in the backend's last complete run.
    TRUNCATED = "truncated"
    # Runs on the backend but not on the reference at all: reported, outside the score.
    REFERENCE_MISSING = "reference_missing"


# The states of a reference-passing test the backend's run lacks: what snapshots and file cells
# count as missing, and what a page shows as "not in this run".
ABSENT_STATES = (
    GapState.MISSING,
    GapState.CRASHED,
    GapState.TIMED_OUT,
    GapState.EMPTY,
    GapState.NOT_RUN,
    GapState.TRUNCATED,
)


class TriageKind(models.TextChoices):
    TRACKED = "tracked"  # an issue tracks it
    INTENDED = "intended"  # backend-specific by design
    # Flaky: CI still runs it, and reports its failure as a skip citing the issue.
    QUARANTINE = "quarantine"
    # Declared not to apply on the backend (a hardware classification, an out-of-tree backend's
    # exclusions, a project's list): outside the score and the gap list, shown with its source.
    NOT_APPLICABLE = "not_applicable"


# Kinds that must cite an issue.
KINDS_WITH_ISSUE = (TriageKind.TRACKED, TriageKind.QUARANTINE)


# The engine's roll-ups of rows per test (current outcomes, gaps and their events, file cells)
# keep their foreign keys in Django only, without constraints in the database: the engine is
# their one writer, and Postgres checked each key of each row written, at commit (a backend's
# first completion writes a gap and an event per test it lacks, and those checks cost more than
# the rest of the recompute: bench/recompute.md). Django still cascades deletes (it always did,
# in Python).
# Keys another index already leads with (project, backend) have no index of their own.
ROLLUP_KEY = {"on_delete": models.CASCADE, "related_name": "+", "db_constraint": False}
ROLLUP_KEY_NULLABLE = {**ROLLUP_KEY, "on_delete": models.SET_NULL}


class BackendState(models.Model):
    """Which run is a backend's current run (latest complete one on the default branch), the
    one before it, and the snapshot pages read for it."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="+")
    backend = models.OneToOneField("Backend", on_delete=models.CASCADE, related_name="state")
    current_run = models.ForeignKey("Run", null=True, on_delete=models.SET_NULL, related_name="+")
    previous_run = models.ForeignKey(
        "Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    snapshot = models.ForeignKey(
        "Snapshot", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    test_count = models.PositiveIntegerField(default=0)
    previous_test_count = models.PositiveIntegerField(null=True, blank=True)
    coverage_drop = models.BooleanField(default=False)
    computed_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.backend} @ run {self.current_run_id}"


class CurrentOutcome(models.Model):
    """A test's combined outcome in its backend's current run: the base of every gap."""

    project = models.ForeignKey("Project", **ROLLUP_KEY, db_index=False)
    backend = models.ForeignKey("Backend", **ROLLUP_KEY, db_index=False)
    test = models.ForeignKey("TestCase", **ROLLUP_KEY)
    # No run column: the run is BackendState.current_run, and without it a new current run
    # rewrites only the rows whose outcome or reason changed.
    outcome = models.PositiveSmallIntegerField()  # parity.models.Outcome
    # Indexed where set only (``currentoutcome_reason``): most outcomes are passes with none,
    # and a backend's first run inserts every one of its tests' rows.
    reason = models.ForeignKey(
        "Reason", null=True, blank=True, **ROLLUP_KEY_NULLABLE, db_index=False
    )
    # When the backend's current runs have had the test since: the started_at of the run that
    # added it (kept while each next current run has it). On the reference, a test newer than a
    # backend's current run is pending there, not a gap. NULL: from before this was kept.
    since = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["backend", "test"], name="currentoutcome_unique")
        ]
        indexes = [
            # The reasons of a backend's current run (the reason trend's daily counts).
            models.Index(
                fields=["backend", "reason"],
                condition=Q(reason__isnull=False),
                name="currentoutcome_reason",
            )
        ]

    def __str__(self) -> str:
        return f"backend {self.backend_id} test {self.test_id}: {self.outcome}"


class PresenceBlock(models.Model):
    """Which of 64 consecutive tests (ids ``block * 64`` on) a backend's current run has, and
    which of those pass there: bit ``id % 64`` of ``present`` and of ``passing``.
    ``CurrentOutcome`` folded to bitmaps, kept by the engine as it writes those
    (``parity.engine.presence``). The backend matrix ANDs these bitmaps rather than group a row
    per test and backend, and a backend's move rewrites only the blocks of the tests whose
    outcome changed: a first run writes a row per 64 tests, not one per test."""

    pk = models.CompositePrimaryKey("backend", "block")
    backend = models.ForeignKey("Backend", db_index=False, **ROLLUP_KEY)
    block = models.BigIntegerField()
    present = models.BigIntegerField()  # a 64-bit set: bit 63 makes it negative
    passing = models.BigIntegerField()

    def __str__(self) -> str:
        return f"backend {self.backend_id}, tests {self.block * 64}+: {self.present:#x}"


class Triage(models.Model):
    """A maintainer's word on gaps, and the project's list of exemptions CI applies: an issue
    tracks them, they are intended, or the tests are quarantined (flaky).

    It targets one test, one reason, or a ``match`` pattern over canonical test IDs (a file, a
    glob over files, or ``file::glob over Class::name``; ``parity.pure.globs``), on the ``backends``
    named (none: every backend), until ``expires_on`` if set. Written only through
    ``parity.services.triage``, which checks its rules (no ``clean`` here: they span fields and
    rows)."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="triages")
    backends = models.ManyToManyField(
        "Backend", blank=True, related_name="+", help_text="None: every backend."
    )
    test = models.ForeignKey(
        "TestCase", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    reason = models.ForeignKey(
        "Reason", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    match = models.TextField(
        blank=True,
        help_text="A test file (test/test_ops.py), a glob over files (test/spmd/**) or over "
        "test IDs (test/test_ops.py::TestOps::test_*_complex64).",
    )
    # ``match`` as an anchored regular expression over test keys, for Postgres and Python alike,
    # and a substring every key it matches holds (a cheap test before the expression's).
    match_regex = models.TextField(blank=True, editable=False)
    match_literal = models.TextField(blank=True, editable=False)
    # key, file, anyfile or glob (``parity.pure.globs.pattern_shape``): all but globs are found by
    # equality on part of the key, without the regex.
    match_shape = models.CharField(max_length=8, blank=True, editable=False)
    kind = models.CharField(max_length=20, choices=TriageKind.choices)
    condition = models.TextField(
        blank=True,
        help_text="Applies only on runs whose attributes match, e.g. arch in (gfx942, gfx90a) "
        "and rocm < 7.14 (parity.pure.attributes).",
    )
    source = models.CharField(
        max_length=200,
        blank=True,
        help_text="Where it came from when not written here: hw_classification, "
        "set_test_configs:<file>, import:<format>.",
    )
    overridden = models.BooleanField(
        default=False,
        help_text="A maintainer set this declaration aside: it no longer applies.",
    )
    extra = models.JSONField(
        default=dict,
        blank=True,
        help_text="Fields an imported list carried that parity does not model (assignee, "
        "comments), kept so an export gives them back.",
    )
    issue = models.ForeignKey(
        "TrackingIssue", null=True, blank=True, on_delete=models.RESTRICT, related_name="+"
    )
    note = models.TextField(blank=True)
    expires_on = models.DateField(
        null=True, blank=True, help_text="After this day it no longer applies."
    )
    # No open gap matches it any more, nor does an agreement score use it (a declaration on the
    # reference's non-passing tests: ``DeclaredNotPassed``): shown so it can be cleaned up. Kept by
    # the engine.
    stale = models.BooleanField(default=False, editable=False)
    # Past ``expires_on``, as the engine last applied it (a beat task re-applies at expiry).
    expired = models.BooleanField(default=False, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(test__isnull=False, reason__isnull=True, match="")
                | Q(test__isnull=True, reason__isnull=False, match="")
                | (Q(test__isnull=True, reason__isnull=True) & ~Q(match="")),
                name="triage_one_target",
            ),
            models.CheckConstraint(
                condition=~Q(kind__in=KINDS_WITH_ISSUE) | Q(issue__isnull=False),
                name="triage_issue_when_required",
            ),
        ]

    def __str__(self) -> str:
        if self.test_id:
            target = f"test {self.test_id}"
        elif self.reason_id:
            target = f"reason {self.reason_id}"
        else:
            target = self.match
        return f"{self.kind}: {target}"


class TriageLapse(models.Model):
    """A conditioned triage that does not apply on a backend: its condition does not hold for
    the backend's attributes and its current run's (``parity.engine.lapses`` keeps the rows).
    Rows for conditioned triages only, so a project with none reads an empty table."""

    triage = models.ForeignKey(Triage, on_delete=models.CASCADE, related_name="lapses")
    backend = models.ForeignKey("Backend", on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["triage", "backend"], name="triage_lapse_unique")
        ]

    def __str__(self) -> str:
        return f"triage {self.triage_id} lapsed on backend {self.backend_id}"


class ExemptionRemoval(models.Model):
    """A triage a maintainer removed (deleted it, or set a declaration aside), kept after the
    triage is gone so a verdict can say which gaps it uncovered: "removed by alice on
    2026-12-03" (``parity.result_reads.verdict``). What the triage named is copied, not
    referenced: the row outlives it. Written by ``parity.services.triage``."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="+")
    triage_id = models.BigIntegerField()  # the removed triage's id (no key: it is gone)
    kind = models.CharField(max_length=20, choices=TriageKind.choices)
    how = models.CharField(max_length=10)  # "removed" (deleted) or "set aside"
    test = models.ForeignKey(
        "TestCase", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    reason = models.ForeignKey(
        "Reason", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    match = models.TextField(blank=True)
    match_regex = models.TextField(blank=True)
    backends = models.JSONField(default=list)  # ids; none: every backend
    condition = models.TextField(blank=True)
    expires_on = models.DateField(null=True, blank=True)
    removed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    removed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["project", "removed_at"], name="exemptionremoval_at")]

    def __str__(self) -> str:
        return f"triage {self.triage_id} {self.how} at {self.removed_at:%Y-%m-%d}"


class Gap(models.Model):
    """A test that passes on the reference's current run but not on a backend's (or runs only
    on the backend: ``reference_missing``). Open while it lasts; closed rows are history."""

    project = models.ForeignKey("Project", **ROLLUP_KEY, db_index=False)
    backend = models.ForeignKey("Backend", **ROLLUP_KEY, db_index=False)
    test = models.ForeignKey("TestCase", **ROLLUP_KEY)
    state = models.CharField(max_length=20, choices=GapState.choices)
    # Keys that are empty when a gap opens (most gaps have no reason, triage or closing run
    # then) are indexed where set only: opening a backend's gaps writes fewer index entries.
    reason = models.ForeignKey(
        "Reason", null=True, blank=True, **ROLLUP_KEY_NULLABLE, db_index=False
    )
    is_open = models.BooleanField(default=True)
    opened_run = models.ForeignKey("Run", **ROLLUP_KEY)
    opened_at = models.DateTimeField()
    closed_run = models.ForeignKey(
        "Run", null=True, blank=True, **ROLLUP_KEY_NULLABLE, db_index=False
    )
    closed_at = models.DateTimeField(null=True, blank=True)
    # Kept by the engine from triages and the reason's issues, so lists filter on columns.
    triage = models.ForeignKey(Triage, null=True, blank=True, **ROLLUP_KEY_NULLABLE, db_index=False)
    tracked = models.BooleanField(default=False)
    intended = models.BooleanField(default=False)
    # Tracked, but every issue it cites is closed: the debt the dashboard exists to show.
    tracked_closed = models.BooleanField(default=False, db_default=False)
    # Its triage declares the test not applicable here: outside the score and the gap list.
    not_applicable = models.BooleanField(default=False, db_default=False)
    # Its test is flaky on the backend over the window (``TestHistory``): reported as flaky,
    # not as an untracked gap (``parity.engine.history``).
    flaky = models.BooleanField(default=False, db_default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["backend", "test"], condition=Q(is_open=True), name="gap_one_open"
            )
        ]
        indexes = [
            models.Index(fields=["project", "is_open", "backend", "state"], name="gap_open"),
            models.Index(fields=["project", "opened_at"], name="gap_opened_at"),
            *(
                models.Index(
                    fields=[key], condition=Q(**{f"{key}__isnull": False}), name=f"gap_{key}"
                )
                for key in ("reason", "closed_run", "triage")
            ),
            models.Index(
                fields=["project", "closed_at"],
                condition=Q(closed_at__isnull=False),
                name="gap_closed_at",
            ),
        ]

    def __str__(self) -> str:
        closed = "" if self.is_open else " (closed)"
        return f"{self.backend_id}/{self.test_id} {self.state}{closed}"


class GapEvent(models.Model):
    """A change of an open gap's state (skipped to failed, say), with the run whose completion
    caused it. A gap's opening and closing are its own row's (``opened_run``/``opened_at``,
    ``closed_run``/``closed_at``): an event for them would copy those columns, and a backend's
    first completion would write each of its tens of thousands of gaps twice."""

    project = models.ForeignKey("Project", **ROLLUP_KEY, db_index=False)
    backend = models.ForeignKey("Backend", **ROLLUP_KEY, db_index=False)
    gap = models.ForeignKey(
        Gap, on_delete=models.CASCADE, related_name="events", db_constraint=False
    )
    from_state = models.CharField(max_length=20, choices=GapState.choices)
    to_state = models.CharField(max_length=20, choices=GapState.choices)
    run = models.ForeignKey("Run", **ROLLUP_KEY)
    at = models.DateTimeField(help_text="When the causing run ran (its started_at).")

    class Meta:
        ordering = ["at", "pk"]
        indexes = [models.Index(fields=["project", "at"], name="gapevent_at")]

    def __str__(self) -> str:
        return f"gap {self.gap_id} {self.from_state} -> {self.to_state} by run {self.run_id}"


class Snapshot(models.Model):
    """A backend's parity numbers for one of its runs; the series feeds trend charts. The row of
    a current run is refreshed when the reference moves on or a triage changes."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="+")
    backend = models.ForeignKey("Backend", on_delete=models.CASCADE, related_name="+")
    run = models.ForeignKey("Run", on_delete=models.CASCADE, related_name="+")
    reference_run = models.ForeignKey(
        "Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField(help_text="The run's started_at.")
    score = models.FloatField(null=True, blank=True)
    passing = models.PositiveIntegerField(default=0)
    reference_passing = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    error = models.PositiveIntegerField(default=0)
    missing = models.PositiveIntegerField(default=0)
    tracked = models.PositiveIntegerField(default=0)
    untracked = models.PositiveIntegerField(default=0)
    intended = models.PositiveIntegerField(default=0)
    tracked_closed = models.PositiveIntegerField(default=0, db_default=0)
    reference_missing = models.PositiveIntegerField(default=0)
    # Reference-passing tests the run lacks that the reference first ran after it: not gaps,
    # and left out of ``reference_passing`` (the backend has not been asked to run them yet).
    pending = models.PositiveIntegerField(default=0, db_default=0)
    # Reference-passing tests declared not applicable here: left out of every count above.
    not_applicable = models.PositiveIntegerField(default=0, db_default=0)
    # Reference-passing tests the run lacks because infrastructure lost their files (crashed,
    # timed out, empty, not run, truncated: ``parity.definitions.INFRA_STATES``): to rerun, left
    # out of every count above and of the score.
    rerun = models.PositiveIntegerField(default=0, db_default=0)
    # For the agreement scores (``parity.pure.scores``): the tests of the reference's run
    # compared (not pending, not applicable), those the reference did not pass whose outcome
    # here differs (absent included), and apart, those that differ but are declared not
    # applicable here (outside the other two).
    reference_tests = models.PositiveIntegerField(default=0, db_default=0)
    differ_not_passed = models.PositiveIntegerField(default=0, db_default=0)
    not_applicable_not_passed = models.PositiveIntegerField(default=0, db_default=0)
    test_count = models.PositiveIntegerField(default=0)
    coverage_drop = models.BooleanField(default=False)
    # The triage queue's headline (``parity.selectors.queue``): its untracked open gaps (the
    # backend's own: ``parity.definitions.counted_sql``), of them the tests the run
    # lacks (``missing``), the files those are in, and the distinct reasons they cite.
    queue_gaps = models.PositiveIntegerField(default=0, db_default=0)
    queue_missing = models.PositiveIntegerField(default=0, db_default=0)
    queue_missing_files = models.PositiveIntegerField(default=0, db_default=0)
    queue_reasons = models.PositiveIntegerField(default=0, db_default=0)

    class Meta:
        ordering = ["backend", "at"]
        constraints = [
            models.UniqueConstraint(fields=["backend", "run"], name="snapshot_unique_run")
        ]
        indexes = [
            models.Index(fields=["project", "at"], name="snapshot_at"),
            # A backend's day's last snapshot, one probe a day (``selectors.snapshot_days``).
            models.Index(fields=["backend", "at"], name="snapshot_backend_at"),
        ]

    def __str__(self) -> str:
        return f"backend {self.backend_id} run {self.run_id}: score {self.score}"


class PendingTest(models.Model):
    """A test the reference passes, that a backend's current run lacks, and that the reference
    first ran in a run CI started after that run (``CurrentOutcome.since``): not yet run there.
    Never a gap; it becomes one (``missing``, ``crashed``...) only when a run of the backend at
    least as new still lacks it. Rewritten with the backend's gaps (``parity.engine.pending``)."""

    project = models.ForeignKey("Project", **ROLLUP_KEY, db_index=False)
    backend = models.ForeignKey("Backend", **ROLLUP_KEY, db_index=False)
    test = models.ForeignKey("TestCase", **ROLLUP_KEY)
    since = models.DateTimeField(help_text="When the reference's run that added it started.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["backend", "test"], name="pendingtest_unique")
        ]

    def __str__(self) -> str:
        return f"backend {self.backend_id} test {self.test_id}: pending"


class FileCell(models.Model):
    """The heatmap: per backend and test file, outcome counts in the current run, and how many
    of the file's reference-passing tests the backend's run lacks."""

    project = models.ForeignKey("Project", **ROLLUP_KEY, db_index=False)
    backend = models.ForeignKey("Backend", **ROLLUP_KEY, db_index=False)
    file = models.CharField(max_length=500)
    passed = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    error = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    missing = models.PositiveIntegerField(default=0)
    # Seconds the file's tests take on the backend: the mean over its recent complete runs (a
    # CI client balances shards by it). None: no recorded durations.
    duration = models.FloatField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["backend", "file"], name="filecell_unique")]
        indexes = [models.Index(fields=["project", "file"], name="filecell_file")]

    def __str__(self) -> str:
        return f"backend {self.backend_id} {self.file}"


class FileGapCount(models.Model):
    """The heatmap's open gaps per backend and test file, as they stand in ``Gap`` (read by
    ``selectors.file_cell_counts``): the heatmap reads these few rows instead of grouping every
    open gap by its test's file. Kept by triggers on the gap table (migration 0039), so every
    write of gaps, by any path (a recompute's diff, a triage's flags, a deletion), moves the
    counts in the same statement; rows whose counts fell to zero stay, as zeros."""

    project = models.ForeignKey("Project", **ROLLUP_KEY, db_index=False)
    backend = models.ForeignKey("Backend", **ROLLUP_KEY, db_index=False)
    file = models.CharField(max_length=500)
    # Open gaps but reference_missing ones: counted (neither not applicable nor lost by
    # infrastructure), of those the intended, and the not-applicable and the lost (to rerun).
    gaps = models.IntegerField(default=0)
    intended = models.IntegerField(default=0)
    not_applicable = models.IntegerField(default=0)
    rerun = models.IntegerField(default=0)
    # Of the open gaps in the triage queue, those of tests the backend never ran (state missing,
    # neither tracked, intended nor not applicable): the overview's "in N files".
    queue_missing = models.IntegerField(default=0)
    # Of the counted gaps, those that read flaky (``parity.definitions.reads_flaky_q``: the test
    # flips over its window of runs and no person triaged the gap): the heatmap cell's marker.
    # Moved by the same triggers, so ``history.mark`` moves it in the statement that marks.
    flaky = models.IntegerField(default=0, db_default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["backend", "file"], name="filegapcount_unique")
        ]
        indexes = [models.Index(fields=["project"], name="filegapcount_project")]

    def __str__(self) -> str:
        return f"backend {self.backend_id} {self.file}: {self.gaps} gaps"


class DeclaredNotPassed(models.Model):
    """Per not-applicable declaration and backend, how many of the reference's tests it did not
    pass, whose outcome differs on the backend, the declaration covers there: tests it keeps out
    of the agreement scores (docs/scores.md), as its gaps keep others out of every score. Written
    with the backend's snapshot (``parity.engine.snapshots``), only while the project uses an
    agreement definition (none otherwise); read by the triages' staleness and the Not applicable
    page."""

    project = models.ForeignKey("Project", **ROLLUP_KEY, db_index=False)
    triage = models.ForeignKey("Triage", **ROLLUP_KEY, db_index=False)
    backend = models.ForeignKey("Backend", **ROLLUP_KEY, db_index=False)
    tests = models.PositiveIntegerField()

    class Meta:
        indexes = [
            models.Index(fields=["project", "triage"], name="declarednotpassed_triage"),
            models.Index(fields=["backend"], name="declarednotpassed_backend"),
        ]

    def __str__(self) -> str:
        return f"triage {self.triage_id} on backend {self.backend_id}: {self.tests} tests"


class ReasonDaily(models.Model):
    """How many tests a reason covers in a backend's current run, per day: the reason trend."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="+")
    reason = models.ForeignKey("Reason", on_delete=models.CASCADE, related_name="+")
    backend = models.ForeignKey("Backend", on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    count = models.PositiveIntegerField()

    class Meta:
        ordering = ["day"]
        constraints = [
            models.UniqueConstraint(fields=["reason", "backend", "day"], name="reasondaily_unique")
        ]
        indexes = [models.Index(fields=["backend", "day"], name="reasondaily_backend_day")]

    def __str__(self) -> str:
        return f"reason {self.reason_id} backend {self.backend_id} {self.day}: {self.count}"


class ProbeOutcome(models.Model):
    """Per exemption and backend, how the tests it covers did in the backend's latest probe
    run (a run with exempted tests run too): those all passed, it "passes now". Written by the
    engine when a probe run completes; deleted with its exemption."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="+")
    triage = models.ForeignKey(Triage, on_delete=models.CASCADE, related_name="probes")
    backend = models.ForeignKey("Backend", on_delete=models.CASCADE, related_name="+")
    run = models.ForeignKey("Run", on_delete=models.CASCADE, related_name="+")
    at = models.DateTimeField(help_text="The probe run's started_at.")
    tests = models.PositiveIntegerField(help_text="Tests it covers that the probe reported.")
    passed = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    error = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["triage", "backend"], name="probeoutcome_unique")
        ]
        indexes = [models.Index(fields=["backend", "run"], name="probeoutcome_run")]

    def __str__(self) -> str:
        return f"triage {self.triage_id} on backend {self.backend_id}: {self.outcome}"

    @property
    def passes_now(self) -> bool:
        return self.tests > 0 and self.passed == self.tests

    @property
    def outcome(self) -> str:
        """passed, error, failed, skipped, or not_run (the probe reported none of its tests:
        it crashed, timed out, or did not run them)."""
        if not self.tests:
            return "not_run"
        for name in ("error", "failed", "skipped"):
            if getattr(self, name):
                return name
        return "passed"


class ExemptionList(models.Model):
    """A version of a backend's exemption list as CI was given it (the manifest or resolve
    API), so a run that names the version it applied can say what changed since."""

    backend = models.ForeignKey("Backend", on_delete=models.CASCADE, related_name="+")
    version = models.CharField(max_length=64)
    exemptions = models.JSONField(help_text="[{id, match, kind}], most specific first.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["backend", "version"], name="exemptionlist_unique")
        ]

    def __str__(self) -> str:
        return f"backend {self.backend_id} exemptions {self.version}"


class ListRowsKept(models.Model):
    """The rows of an imported list that declare nothing parity imports (an AMD sheet's row with
    no reason or issue yet, or one that passes on every arch), kept as the list had them so its
    export gives them back with their assignee and comments. One per list (``source``)."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="+")
    source = models.CharField(max_length=200, help_text="The list's, as its triages have it.")
    format = models.CharField(max_length=40, help_text="The list's format (amd-csv).")
    rows = models.JSONField(
        default=list, help_text="[{header, row, order, match}]: each row as the list had it."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "source"], name="listrowskept_unique")
        ]

    def __str__(self) -> str:
        return f"{self.source}: {len(self.rows)} row(s) kept"
