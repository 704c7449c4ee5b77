"""Re-normalize stored raw uploads after a rule change, atomically per run."""

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction
from django.db.models import Exists, OuterRef

from ingest.issue_links import reason_issues_link
from ingest.pipeline import upload_rows
from ingest.writer import results_delete_for_run, results_write
from parity.engine import project_recompute
from parity.models import Project, Result, Run, TestCase, Upload, UploadStatus

logger = logging.getLogger(__name__)


@dataclass
class ReingestSummary:
    runs: int = 0
    uploads: int = 0
    results: int = 0
    orphans_deleted: int = 0
    runs_done: list[int] = field(default_factory=list)


def run_reingest(*, run: Run) -> tuple[int, int]:
    """Replace a run's results with a fresh ingest of its stored files; all or nothing.
    Returns (uploads, results)."""
    with transaction.atomic():
        uploads = list(
            Upload.objects.select_for_update(no_key=True, of=("self",))
            .filter(run=run, status=UploadStatus.DONE)
            .select_related("run__project")
            .order_by("pk")
        )
        results_delete_for_run(run=run)
        total = 0
        for upload in uploads:
            summary = results_write(upload=upload, rows=upload_rows(upload))
            reason_issues_link(project=run.project, reason_ids=summary.new_reason_ids)
            Upload.objects.filter(pk=upload.pk).update(counts=summary.counts)
            total += summary.counts["total"]
    return len(uploads), total


def testcases_delete_orphans(*, project: Project) -> int:
    """Test rows no result points at any more: the old IDs a rule change replaced."""
    orphans = TestCase.objects.filter(project=project).exclude(
        Exists(Result.objects.filter(test_id=OuterRef("pk")))
    )
    # delete() counts the rows it cascaded to (their gaps, outcomes) too: count the tests.
    _, by_model = orphans.delete()
    return by_model.get(TestCase._meta.label, 0)


def reingest_runs(*, project: Project):
    """The runs a re-ingest reads: those past retention have no raw files left to read again,
    and their roll-ups stay as they are."""
    return (
        Run.objects.filter(project=project, results_expired_at__isnull=True)
        .select_related("project")
        .order_by("started_at")
    )


def project_reingest(
    *,
    project: Project,
    since: datetime | None = None,
    before_recompute: Callable[[], None] | None = None,
) -> ReingestSummary:
    """``before_recompute``: what must follow the new IDs before roll-ups are rebuilt from them
    and the old rows go (a re-key moves triages there)."""
    summary = ReingestSummary()
    runs = reingest_runs(project=project)
    if since is not None:
        runs = runs.filter(started_at__gte=since)
    for run in runs:
        uploads, results = run_reingest(run=run)
        summary.runs += 1
        summary.uploads += uploads
        summary.results += results
        summary.runs_done.append(run.pk)
        logger.info("run %s re-ingested: %s uploads, %s results", run.pk, uploads, results)
    if before_recompute is not None:
        before_recompute()
    # Roll-ups point at test IDs: rebuild them from the new IDs before the old ones go.
    project_recompute(project=project)
    summary.orphans_deleted = testcases_delete_orphans(project=project)
    return summary
