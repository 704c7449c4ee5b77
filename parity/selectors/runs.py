"""Runs and uploads, newest first, a page at a time: what CI sent, whether it was ingested, and
which run is each backend's current one."""

from collections import Counter
from dataclasses import dataclass

from parity.models import BackendState, Project, Run, Upload, UploadStatus

COUNT_FIELDS = ("total", "passed", "skipped", "failed", "error")


@dataclass(frozen=True)
class RunRow:
    run: Run
    uploads: list[Upload]  # oldest first
    is_current: bool
    counts: dict[str, int]  # summed over the run's ingested uploads

    @property
    def failed_uploads(self) -> int:
        return sum(u.status == UploadStatus.FAILED for u in self.uploads)

    @property
    def pending_uploads(self) -> int:
        return sum(u.status in (UploadStatus.QUEUED, UploadStatus.PROCESSING) for u in self.uploads)


@dataclass(frozen=True)
class RunsPage:
    rows: list[RunRow]
    page: int
    has_next: bool


def runs_page(
    *, project: Project, backend: str | None = None, page: int = 1, per_page: int = 25
) -> RunsPage:
    """One page of runs. No total count: the page fetches one row more to know if another
    page follows, so its cost does not depend on the length of history. Three queries."""
    page = max(page, 1)
    runs = Run.objects.filter(project=project).select_related("backend")
    if backend:
        runs = runs.filter(backend__name=backend)
    offset = (page - 1) * per_page
    found = list(
        runs.order_by("-started_at", "-pk").prefetch_related("uploads")[
            offset : offset + per_page + 1
        ]
    )
    current = set(
        BackendState.objects.filter(project=project).values_list("current_run_id", flat=True)
    )
    rows = [_row(run, current) for run in found[:per_page]]
    return RunsPage(rows=rows, page=page, has_next=len(found) > per_page)


def _row(run: Run, current: set[int]) -> RunRow:
    uploads = sorted(run.uploads.all(), key=lambda u: (u.created_at, u.pk))
    counts: Counter = Counter()
    for upload in uploads:
        if upload.status == UploadStatus.DONE:
            counts.update({k: upload.counts.get(k, 0) for k in COUNT_FIELDS})
    return RunRow(
        run=run,
        uploads=uploads,
        is_current=run.pk in current,
        counts={k: counts[k] for k in COUNT_FIELDS},
    )
