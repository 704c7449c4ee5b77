"""Uploads nobody is ingesting any more: a worker died mid-ingest, a task message was lost, the
broker was away when the upload was queued, or a request died between committing its upload and
queueing it. A beat task finds them, queues them again, and fails the ones that keep failing,
saying why; nothing stays queued or processing for good.

Queueing again is safe for an upload that a slow worker still holds: the worker's row lock is
the claim (``pipeline._lock``), so the extra delivery finds it locked, or finished, and returns.
"""

import datetime
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.db.models.functions import Greatest
from django.utils import timezone

from ingest.pipeline import upload_fail
from parity.models import Upload, UploadStatus

logger = logging.getLogger(__name__)

PENDING = [UploadStatus.QUEUED, UploadStatus.PROCESSING]


@dataclass
class Recovered:
    requeued: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)


def uploads_stale(*, now: datetime.datetime) -> list[int]:
    """Pending uploads whose last message is gone, oldest first. At most one message per upload
    is in flight, however long the queue: an upload is queued again only when

    - a worker took up its last message (``started_at`` after it was sent) and nothing touched
      it for ``PARITY_UPLOAD_STALE_SECONDS`` (the worker died; a live one holds its row lock,
      which ``uploads_recover`` skips), or
    - its last message never reached the broker (``unsent``): there is none to wait for, or
    - its last message was never taken up in ``PARITY_UPLOAD_LOST_SECONDS`` (the broker lost it,
      or a request died before sending it). A message still waiting in a long queue is left
      alone until then, so a backlog is not multiplied by recovery."""
    stale = now - datetime.timedelta(seconds=settings.PARITY_UPLOAD_STALE_SECONDS)
    lost = now - datetime.timedelta(seconds=settings.PARITY_UPLOAD_LOST_SECONDS)
    taken = Q(started_at__isnull=False, started_at__gte=F("sent_at"))
    return list(
        Upload.objects.filter(status__in=PENDING)
        .alias(sent_at=Greatest("created_at", "requeued_at"))
        .filter((taken & Q(started_at__lt=stale)) | (~taken & Q(sent_at__lt=lost)) | Q(unsent=True))
        .order_by("created_at", "pk")
        .values_list("pk", flat=True)
    )


def uploads_recover(
    *, enqueue: Callable[[int], object], now: datetime.datetime | None = None
) -> Recovered:
    """Queue each stale upload (``uploads_stale``) again through ``enqueue`` (once its row is
    committed), or fail it past ``PARITY_UPLOAD_MAX_ATTEMPTS``. Uploads a live worker holds are
    left alone."""
    now = now or timezone.now()
    recovered = Recovered()
    for upload_id in uploads_stale(now=now):
        with transaction.atomic():
            upload = (
                Upload.objects.select_for_update(skip_locked=True, no_key=True)
                .filter(pk=upload_id, status__in=PENDING)
                .first()
            )
            if upload is None:
                continue  # a worker holds it now, or it just finished
            if upload.attempts >= settings.PARITY_UPLOAD_MAX_ATTEMPTS:
                _give_up(upload)
                recovered.failed.append(upload_id)
            else:
                Upload.objects.filter(pk=upload_id).update(requeued_at=now, unsent=False)
                transaction.on_commit(lambda pk=upload_id: enqueue(pk))
                recovered.requeued.append(upload_id)
    if recovered.requeued or recovered.failed:
        logger.warning(
            "uploads recovered: queued again %s, failed %s", recovered.requeued, recovered.failed
        )
    return recovered


def upload_unsent_mark(*, upload_id: int) -> None:
    """The upload's message did not reach the broker: the next recovery tick sends it, rather
    than waiting ``PARITY_UPLOAD_LOST_SECONDS`` for a message that does not exist."""
    Upload.objects.filter(pk=upload_id, status__in=PENDING).update(unsent=True)
    logger.warning("upload %s unsent: the next recovery tick queues it", upload_id)


def _give_up(upload: Upload) -> None:
    message = (
        f"Ingest did not finish after {upload.attempts} attempts: each time the worker was lost "
        "or timed out. Nothing of this upload was stored; send it again, and if it fails the "
        "same way, ask the operators to check the ingest workers' logs."
    )
    upload_fail(upload_id=upload.pk, message=message)
