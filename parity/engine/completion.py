"""Runs whose CI never said ``complete``: after a quiet period with no upload, they are."""

import datetime
import logging

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Max, Q
from django.utils import timezone

from ingest.services import run_complete
from parity.models import Run, UploadStatus

logger = logging.getLogger(__name__)


def runs_complete_quiet(*, now: datetime.datetime | None = None) -> list[int]:
    """Mark complete every run with at least one ingested upload, none still queued or
    processing, and none finished within ``PARITY_RUN_QUIET_MINUTES``. Oldest first, so each
    backend's current run moves forward in order. Returns the ids of the runs completed."""
    now = now or timezone.now()
    cutoff = now - datetime.timedelta(minutes=settings.PARITY_RUN_QUIET_MINUTES)
    pending = [UploadStatus.QUEUED, UploadStatus.PROCESSING]
    quiet = (
        Run.objects.filter(complete=False)
        .annotate(
            last_finished=Max("uploads__finished_at"),
            pending=Count("uploads", filter=Q(uploads__status__in=pending)),
            done=Count("uploads", filter=Q(uploads__status=UploadStatus.DONE)),
        )
        .filter(last_finished__lt=cutoff, pending=0, done__gt=0)
        .order_by("started_at", "pk")
    )
    completed = []
    for run in quiet:
        with transaction.atomic():  # each run's recompute is queued when its own commit lands
            run_complete(run=run)
        completed.append(run.pk)
    if completed:
        logger.info("runs completed after the quiet period: %s", completed)
    return completed
