"""Run health: what infrastructure lost in a run, for a bot to run again.

A run is healthy when infrastructure lost none of it. It is unhealthy when a file of its
manifest did not run normally (an ``INFRA_STATES`` state: crashed, timed out, empty, not run,
truncated) or an upload failed to ingest. Those are no gaps of the backend: the verdict counts
their tests apart (``opened["infra"]``) and names the files and CI jobs to run again here, its
``rerun``. A shard's verdict names only the shard's own (``Rerun.of_shard``).

Read from the run's manifest rows and uploads by the run's indexes: two queries, whatever the
run's size.
"""

from dataclasses import dataclass, replace

from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce

from parity.definitions import INFRA_FILE_STATES
from parity.models import Run, RunFile, Upload, UploadStatus


@dataclass(frozen=True)
class RerunFile:
    """A file of the run whose tests infrastructure lost: rerun it."""

    file: str
    state: str  # an ``INFRA_STATES`` state: crashed, timed_out, empty, not_run, truncated
    exit_status: str  # how its process ended: SIGSEGV, exit 124, timed out, not started
    shard: str  # the shard that ran it, as the client named it ("2/4"); "" if none said
    upload: int | None  # the upload that reported it (None: a list that only expected it)
    tests: int | None  # tests its report held
    baseline_tests: int | None  # ... and held in the last complete run (truncated only)


@dataclass(frozen=True)
class RerunShard:
    """A CI job (one upload) to run again: its files that infrastructure lost, or its upload
    that could not be ingested."""

    shard: str  # as the client named it ("2/4"); "" if none said
    upload: int | None
    files: int  # its files to rerun (a failed upload: the files its manifest listed)
    failed_upload: bool  # its upload failed to ingest: send it again (``error`` says why)
    error: str


@dataclass(frozen=True)
class VerdictFile:
    """A file of the run manifest that did not run normally: why its tests have no result."""

    file: str
    state: str  # crashed, timed_out, empty, not_run
    status: str  # how its process ended: SIGSEGV, exit 124, timed out, not started
    tests: int | None


@dataclass(frozen=True)
class Rerun:
    """Run health: what infrastructure lost in the run, for a bot to run again."""

    files: list[RerunFile]
    shards: list[RerunShard]

    @property
    def healthy(self) -> bool:
        return not self.files and not self.shards

    @property
    def unrun_files(self) -> list[VerdictFile]:
        """The files to rerun as the verdict lists them: why each file's tests have no result."""
        return [
            VerdictFile(file=f.file, state=f.state, status=f.exit_status, tests=f.tests)
            for f in self.files
        ]

    def of_shard(self, *, shard: str, files: set[str]) -> "Rerun":
        """What shard ``shard``'s CI job runs again: its ``files`` that infrastructure lost, and
        its own uploads."""
        return Rerun(
            files=[f for f in self.files if f.file in files],
            shards=[s for s in self.shards if s.shard == shard],
        )


def run_health(*, run: Run) -> Rerun:
    """The run's files in an ``INFRA_STATES`` state and its uploads that failed to ingest, by
    shard. Two queries by the run's indexes: its manifest rows not ``ran`` (with their upload's
    shard), and its failed uploads."""
    rows = (
        RunFile.objects.filter(run=run, state__in=INFRA_FILE_STATES)
        .select_related("upload")
        .order_by("file")
    )
    files = [
        RerunFile(
            file=f.file,
            state=f.state,
            exit_status=f.exit_status,
            shard=f.upload.shard if f.upload else "",
            upload=f.upload_id,
            tests=f.tests,
            baseline_tests=f.baseline_tests,
        )
        for f in rows
    ]
    shards: dict[int | None, RerunShard] = {}
    for f in files:
        shard = shards.get(f.upload) or RerunShard(f.shard, f.upload, 0, False, "")
        shards[f.upload] = replace(shard, files=shard.files + 1)
    listed = (
        RunFile.objects.filter(run=run, upload_id=OuterRef("pk"))
        .order_by()
        .values("upload_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    failed = Upload.objects.filter(run=run, status=UploadStatus.FAILED).annotate(
        listed=Coalesce(Subquery(listed), 0)
    )
    for upload in failed.order_by("pk"):
        shards[upload.pk] = RerunShard(upload.shard, upload.pk, upload.listed, True, upload.error)
    return Rerun(files=files, shards=sorted(shards.values(), key=_shard_order))


def _shard_order(shard: RerunShard) -> tuple:
    return (shard.shard, shard.upload or 0)
