"""Celery adapters of ingest: ids in, state in Postgres, a service does the work."""

import logging

from celery import Task, shared_task
from django.db import DatabaseError

from ingest import pipeline, recovery, rekey
from parity.celery import RETRY_ON_DATABASE_ERRORS, task_send
from parity.raw_storage import StorageUnavailable

logger = logging.getLogger(__name__)

# The tasks that read raw files retry a storage out of reach as they do Postgres: the file is
# there, and the bucket comes back.
RETRY_ON_STORE_ERRORS = {
    **RETRY_ON_DATABASE_ERRORS,
    "autoretry_for": (DatabaseError, StorageUnavailable),
}


class UploadIngestTask(Task):
    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:
        # Retries are spent, or the error is not one to retry: the upload ends failed with the
        # reason instead of staying "processing" for good.
        upload_id = kwargs.get("upload_id", args[0] if args else None)
        if isinstance(exc, StorageUnavailable):
            # Except when the bucket is still away: its file is there, and recovery queues the
            # upload again every PARITY_UPLOAD_STALE_SECONDS until it can be read.
            logger.warning("upload %s left to recovery: %s", upload_id, exc)
            return
        message = f"Ingest failed: {type(exc).__name__}: {exc}".strip()
        pipeline.upload_fail(upload_id=upload_id, message=message[:2000])
        logger.error("upload %s failed for good: %s", upload_id, message)


@shared_task(base=UploadIngestTask, **RETRY_ON_STORE_ERRORS)
def upload_ingest(upload_id: int) -> None:
    """Adapter: ids in, state in Postgres. Bad content fails the upload; only database and
    storage errors retry (with backoff), and a retry finds the upload's results rolled back."""
    pipeline.upload_ingest(upload_id=upload_id)


def upload_send(upload_id: int) -> None:
    """Queue the upload's ingest. When the broker stays unreachable the upload is marked
    unsent, and the first recovery tick after the broker is back sends it."""
    if not task_send(upload_ingest, upload_id):
        recovery.upload_unsent_mark(upload_id=upload_id)


@shared_task(acks_late=True)
def uploads_recover() -> None:
    """Beat: queue again the uploads a lost worker or message left pending, or whose message
    never reached the broker; fail the hopeless."""
    recovery.uploads_recover(enqueue=upload_send)


# A re-key reads every stored upload of a project, longer than the default limit allows for a
# project with months of runs. A message redelivered meanwhile finds the row claimed: a no-op.
REKEY_LIMITS = {"soft_time_limit": 6 * 3600, "time_limit": 6 * 3600 + 120}


@shared_task(**RETRY_ON_STORE_ERRORS, **REKEY_LIMITS)
def rekey_plan(rekey_id: int) -> None:
    """Adapter: count what a re-key's rules change in the stored tests."""
    rekey.rekey_plan(rekey_id=rekey_id)


@shared_task(**RETRY_ON_STORE_ERRORS, **REKEY_LIMITS)
def rekey_run(rekey_id: int) -> None:
    """Adapter: re-key the stored tests of a planned request."""
    rekey.rekey_run(rekey_id=rekey_id)


def rekey_send(rekey_id: int, *, run: bool) -> None:
    """Queue a re-key's plan or its run; a broker that stays down leaves it in its state, and
    the page offers to plan again."""
    task_send(rekey_run if run else rekey_plan, rekey_id)
