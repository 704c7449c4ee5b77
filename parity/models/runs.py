from pathlib import Path

from django.db import models
from django.utils import timezone

from parity.models.links import validate_web_url
from parity.models.results import MAX_FILE_CHARS
from parity.pure.run_manifest import FileRun, exit_status


class Run(models.Model):
    """One backend's test run of one commit; several shard uploads may make it up."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="runs")
    backend = models.ForeignKey("Backend", on_delete=models.CASCADE, related_name="runs")
    key = models.CharField(max_length=200, help_text="The client's run key; groups shards.")
    commit = models.CharField(max_length=64)
    branch = models.CharField(max_length=200, blank=True)
    ci_url = models.URLField(max_length=500, blank=True, validators=[validate_web_url])
    complete = models.BooleanField(default=False)
    completed_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(
        default=timezone.now, help_text="When CI ran it (the first upload's timestamp)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    probe = models.BooleanField(
        default=False,
        help_text="A probe: exempted tests ran too. Never current; only says which exemptions "
        "pass now.",
    )
    exemptions_version = models.CharField(
        max_length=64, blank=True, help_text="The version of the exemption list CI applied."
    )
    attributes = models.JSONField(
        default=dict,
        blank=True,
        help_text='What CI said it ran on, e.g. {"arch": "gfx942", "rocm": "7.1"}.',
    )
    results_expired_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When retention deleted its results and raw files; roll-ups keep its numbers.",
    )
    passes_expired_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When retention deleted its passed results "
        "(PARITY_PASSES_KEEP_DAYS); its other results stay until results_expired_at.",
    )

    class Meta:
        ordering = ["-started_at"]
        constraints = [
            models.UniqueConstraint(fields=["project", "backend", "key"], name="run_unique_key")
        ]
        indexes = [
            models.Index(fields=["backend", "branch", "-started_at"]),
            # The runs list's pages: newest first, of the project or of one backend; by commit.
            models.Index(fields=["project", "-started_at", "-id"], name="run_project_started"),
            models.Index(fields=["backend", "-started_at", "-id"], name="run_backend_started"),
            models.Index(fields=["project", "commit", "-started_at", "-id"], name="run_commit"),
        ]

    def __str__(self) -> str:
        return f"{self.backend} {self.commit[:12]} ({self.key})"


class RunSplit(models.Model):
    """The files and durations a sharded run's jobs split, pinned when a job first asked for them
    under the run's key: every shard then computes the same split, whatever run completes
    meanwhile (a shard of this very run, another commit's, the reference's). The manifest API
    answers them for the key (``run=``); its exemptions stay live."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="+")
    # The backend the jobs named (a family, not the variant their first upload may create).
    backend = models.ForeignKey("Backend", on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=200, help_text="The run key the jobs upload under.")
    files = models.JSONField(default=list, help_text="The manifest's files, as first answered.")
    durations = models.JSONField(default=dict, help_text="Seconds per file, as first answered.")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["backend", "key"], name="run_split_unique_key")
        ]
        indexes = [models.Index(fields=["backend", "created_at"], name="run_split_created")]

    def __str__(self) -> str:
        return f"{self.backend} split of {self.key} ({len(self.files)} files)"


class UploadStatus(models.TextChoices):
    QUEUED = "queued"
    PROCESSING = "processing"
    DONE = "done"
    FAILED = "failed"


class Upload(models.Model):
    """What CI sent in one request. States only move forward: queued → processing → done|failed."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="uploads")
    sha256 = models.CharField(max_length=64, help_text="Digest of the files' contents.")
    size = models.BigIntegerField(help_text="Bytes received.")
    status = models.CharField(
        max_length=10, choices=UploadStatus.choices, default=UploadStatus.QUEUED
    )
    error = models.TextField(blank=True)
    counts = models.JSONField(default=dict, blank=True)
    warnings = models.JSONField(
        default=list,
        blank=True,
        help_text="What an ingested upload skipped, one sentence each (a symbolic link).",
    )
    declarations = models.JSONField(
        default=dict,
        blank=True,
        help_text='What the runner declared about its tests, e.g. {"hw_classification": '
        '{"test/test_ops.py::TestOps": "GENERIC"}} (parity.pure.declarations).',
    )
    completes_run = models.BooleanField(default=False)
    file_hint = models.CharField(
        max_length=500, blank=True, help_text="Test file for XML that names no file (__main__)."
    )
    shard = models.CharField(
        max_length=20,
        blank=True,
        help_text='The CI job\'s shard, as the client names it ("2/4"): what a bot reruns.',
    )
    suite = models.CharField(
        max_length=200,
        blank=True,
        help_text="The suite or CI job it is of, as CI names it on its backend "
        "(parity.models.suites, docs/suites.md).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(
        default=0, help_text="Times a worker took it up; past PARITY_UPLOAD_MAX_ATTEMPTS it fails."
    )
    requeued_at = models.DateTimeField(
        null=True, blank=True, help_text="When recovery last queued it again."
    )
    unsent = models.BooleanField(
        default=False,
        help_text="Its last message never reached the broker: the next recovery tick sends it.",
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["run", "sha256"], name="upload_unique_content")
        ]
        indexes = [
            models.Index(fields=["status", "created_at"]),
            # A backend's newest upload (the overview): walked newest first, a backend that
            # uploads finds its own within a few rows.
            models.Index(fields=["-created_at", "-id"], name="upload_newest"),
            # The suites matrix: the uploads that name a suite, a run's few at a time.
            models.Index(
                fields=["run", "suite"], name="upload_run_suite", condition=~models.Q(suite="")
            ),
        ]

    def __str__(self) -> str:
        return f"upload {self.pk} ({self.status})"


MAX_STORED_NAME_CHARS = 100


def upload_file_path(instance: "UploadFile", filename: str) -> str:
    # The digest makes the path unique; the client's name (kept whole in ``name``) is cut so
    # the path fits the column and the file system's 255-byte name limit.
    stem = Path(filename).name[-MAX_STORED_NAME_CHARS:]
    return f"uploads/{instance.sha256[:2]}/{instance.sha256}/{stem}"


class UploadFile(models.Model):
    """One raw file of an upload, kept so the upload can be re-ingested after a rule change."""

    upload = models.ForeignKey(Upload, on_delete=models.CASCADE, related_name="files")
    name = models.TextField()
    sha256 = models.CharField(max_length=64)
    size = models.BigIntegerField()
    raw = models.FileField(upload_to=upload_file_path, max_length=500)

    class Meta:
        ordering = ["upload", "pk"]

    def __str__(self) -> str:
        return self.name


class RawFileLeft(models.Model):
    """A raw file whose row is gone but whose deletion the storage refused (a bucket out of
    reach): ``parity.services.retention.raw_files_left_delete`` (beat) deletes it again until
    the storage takes it, so a refused delete is late, never garbage for good."""

    name = models.CharField(max_length=500, unique=True)
    left_at = models.DateTimeField(auto_now_add=True)
    attempts = models.PositiveIntegerField(default=1)

    def __str__(self) -> str:
        return self.name


class RunFileState(models.TextChoices):
    """What happened to a test file a run's CI was told to run (``parity.pure.run_manifest``);
    all but ``ran`` are also the gap state of its tests that have no result."""

    RAN = "ran"
    CRASHED = "crashed"
    TIMED_OUT = "timed_out"
    EMPTY = "empty"
    NOT_RUN = "not_run"
    # It ran and reported, but more than the project's ``truncation_percent`` fewer tests than
    # in the backend's last complete run (``parity.definitions.file_truncated``).
    TRUNCATED = "truncated"


class RunFile(models.Model):
    """The run manifest: one test file a run's CI jobs were told to run, and what happened to
    it. The uploads of a run's shards merge here, one row per file: a file some shard started
    wins over a list that only expected it."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="files")
    file = models.CharField(max_length=MAX_FILE_CHARS, db_collation="C")
    state = models.CharField(max_length=10, choices=RunFileState.choices)
    started = models.BooleanField(default=True)
    exit_code = models.IntegerField(null=True, blank=True)
    signal = models.CharField(max_length=20, blank=True)
    timed_out = models.BooleanField(default=False)
    duration = models.FloatField(null=True, blank=True, help_text="Seconds.")
    report = models.BooleanField(default=False, help_text="Its JUnit report was written.")
    tests = models.PositiveIntegerField(null=True, blank=True, help_text="Tests its report held.")
    baseline_tests = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Tests its report held in the backend's last complete run, when this one is "
        "truncated against it.",
    )
    upload = models.ForeignKey(
        Upload, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["run", "file"]
        constraints = [models.UniqueConstraint(fields=["run", "file"], name="runfile_unique")]

    def __str__(self) -> str:
        return f"run {self.run_id} {self.file}: {self.state}"

    @property
    def exit_status(self) -> str:
        """How its process ended: "SIGSEGV", "exit 124", "timed out", "not started"..."""
        return exit_status(
            FileRun(
                file=self.file,
                started=self.started,
                exit_code=self.exit_code,
                signal=self.signal,
                timed_out=self.timed_out,
            )
        )
