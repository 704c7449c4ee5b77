from django.db import models
from django.db.models.functions import MD5, Cast, Now

# Limits on what one test's identity may hold. Names and keys are unbounded text (a pytest
# parametrization or a generated classname can run to thousands of characters) and are unique by
# a digest, since a btree entry cannot exceed ~2.7 kB; a file path stays indexable as it is.
MAX_FILE_CHARS = 500


class TestCase(models.Model):
    """One logical test of a project, under its canonical ID, whatever backend ran it."""

    __test__ = False  # not a pytest test class

    # No database constraint and no index of its own, like Result's keys: a deferred FK check
    # per row cost a first ingest seconds at commit (bench/README.md), and the unique index, which
    # leads with the project, serves every lookup by project. Deleting a project still deletes
    # its tests (Django cascades).
    project = models.ForeignKey(
        "Project",
        on_delete=models.CASCADE,
        related_name="tests",
        db_constraint=False,
        db_index=False,
    )
    key = models.TextField(help_text="Canonical ID: file::Class::name")
    key_digest = models.GeneratedField(
        expression=Cast(MD5("key"), output_field=models.UUIDField()),
        output_field=models.UUIDField(),
        db_persist=True,
        help_text="md5 of the key: the unique, indexable stand-in for a key of any length.",
    )
    # Compared byte by byte ("C"): paths need no language's collation, and the unique index
    # compares one for every test an upload adds.
    file = models.CharField(max_length=MAX_FILE_CHARS, blank=True, db_collation="C")
    class_name = models.TextField(blank=True)
    name = models.TextField()
    # The database's default too: ingest COPYs new tests straight into the table.
    created_at = models.DateTimeField(auto_now_add=True, db_default=Now())

    class Meta:
        # One index serves both lookups, a file's tests and a test by its key (whose file comes
        # with it), and keeps a key unique in its file. An upload adds its tests file by file,
        # so they land next to each other in it: a COPY of new tests spends less on it than on
        # (project, digest) and (project, file) apart, the digests of one file landing all over
        # the first.
        constraints = [
            models.UniqueConstraint(
                fields=["project", "file", "key_digest"], name="testcase_unique_key"
            )
        ]

    def __str__(self) -> str:
        return self.key


class Outcome(models.IntegerChoices):
    PASSED = 1, "passed"
    SKIPPED = 2, "skipped"
    FAILED = 3, "failed"
    ERROR = 4, "error"


# The keys of rows written by COPY in bulk: no constraint, no index of their own (see Result).
BULK_KEY = {
    "on_delete": models.DO_NOTHING,
    "db_constraint": False,
    "db_index": False,
    "related_name": "+",
}


class Result(models.Model):
    """One test's outcome in one upload.

    The largest table by far, written by COPY in bulk (ingest/writer.py). Its foreign keys have
    no database constraints and no per-column indexes: deferred FK triggers and an index per FK
    cut bulk-load speed several-fold, and the writer already joins every id from its parent
    table in the same transaction. Rows go away with their run (writer and run deletion).

    Partitioned by run id range, one partition a day (migration 0033,
    ``parity.storage.partitions``): retention drops a day instead of deleting its rows. So the
    table has no primary key in the database, only this model's (a unique index must hold the
    partition key, and no read finds a result by id): a statement that touches results names
    their run.
    """

    run = models.ForeignKey("Run", **BULK_KEY)
    upload = models.ForeignKey("Upload", **BULK_KEY)
    test = models.ForeignKey(TestCase, **BULK_KEY)
    outcome = models.PositiveSmallIntegerField(choices=Outcome.choices)
    duration = models.FloatField(null=True, blank=True, help_text="Seconds.")
    # Rerun in the upload with differing outcomes (failed, then passed): a flaky signal.
    flaky = models.BooleanField(default=False, db_default=False)
    message = models.TextField(blank=True, help_text="Raw skip or failure message, truncated.")
    reason = models.ForeignKey("Reason", null=True, blank=True, **BULK_KEY)

    class Meta:
        # One index, and no other (no primary key index either). Every read of results names
        # the run: a run's outcomes (the engine), its durations, retention and deletion, and a
        # test's history, which walks the backend's runs newest first and probes (run, test). A
        # (test, run) index, kept for that history before, cost ingest as much again as this
        # one: its entries land all over it.
        indexes = [models.Index(fields=["run", "test"], name="result_run_test")]

    def __str__(self) -> str:
        return f"{self.test_id} {self.get_outcome_display()} in run {self.run_id}"


class FileSeconds(models.Model):
    """How long one upload's tests of one file ran: the writer sums their durations as it
    writes their results. The engine averages a backend's recent runs from these few rows (a
    CI client balances its shards by each file's duration) instead of reading every result of
    those runs again on each recompute. Like results, they go with their run's results, and
    are partitioned as results are (a day's partition of each goes at once)."""

    run = models.ForeignKey("Run", **BULK_KEY)
    upload = models.ForeignKey("Upload", **BULK_KEY)
    file = models.CharField(max_length=MAX_FILE_CHARS, blank=True, db_collation="C")
    seconds = models.FloatField()

    class Meta:
        indexes = [models.Index(fields=["run"], name="fileseconds_run")]

    def __str__(self) -> str:
        return f"{self.file}: {self.seconds:.1f}s in upload {self.upload_id}"
