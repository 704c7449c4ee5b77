"""What an operator's dashboards graph (``/metrics``, parity.health.metrics): uploads waiting and
failed, how long recent ingests took, how stale the tracker sync is, digests sent. Each a
cheap read at scrape time: uploads through their (status, created_at) index, the other tables
small (one row per tracked issue, one per subscriber and week)."""

import datetime
from dataclasses import dataclass

from django.db.models import Avg, Count, DurationField, ExpressionWrapper, F, Max, Min
from django.utils import timezone

from parity.models import DeliveryStatus, DigestDelivery, TrackingIssue, Upload, UploadStatus

INGEST_WINDOW = datetime.timedelta(hours=1)


@dataclass(frozen=True)
class IngestTimes:
    count: int
    mean_seconds: float
    max_seconds: float


def uploads_by_status() -> dict[str, int]:
    """Uploads queued, processing and failed (done ones are the rest, and unbounded)."""
    pending = (UploadStatus.QUEUED, UploadStatus.PROCESSING, UploadStatus.FAILED)
    rows = Upload.objects.filter(status__in=pending).values("status").annotate(n=Count("id"))
    counts = {str(status): 0 for status in pending}
    counts.update({row["status"]: row["n"] for row in rows})
    return counts


def ingest_times_recent(*, now: datetime.datetime | None = None) -> IngestTimes:
    """Ingest time (worker start to finish) of the uploads received in the last hour and done."""
    since = (now or timezone.now()) - INGEST_WINDOW
    took = ExpressionWrapper(F("finished_at") - F("started_at"), output_field=DurationField())
    row = Upload.objects.filter(
        status=UploadStatus.DONE, created_at__gte=since, started_at__isnull=False
    ).aggregate(n=Count("id"), mean=Avg(took), longest=Max(took))
    return IngestTimes(
        count=row["n"],
        mean_seconds=row["mean"].total_seconds() if row["mean"] else 0.0,
        max_seconds=row["longest"].total_seconds() if row["longest"] else 0.0,
    )


def tracker_sync_lag_seconds(*, now: datetime.datetime | None = None) -> float | None:
    """Seconds since the least recently synced tracking issue was read; None with none synced."""
    oldest = TrackingIssue.objects.aggregate(oldest=Min("synced_at"))["oldest"]
    return None if oldest is None else ((now or timezone.now()) - oldest).total_seconds()


def digests_sent() -> int:
    return DigestDelivery.objects.filter(status=DeliveryStatus.SENT).count()
