from celery import shared_task

from ingest import pipeline
from parity.celery import RETRY_ON_DATABASE_ERRORS


@shared_task(**RETRY_ON_DATABASE_ERRORS)
def upload_ingest(upload_id: int) -> None:
    """Adapter: ids in, state in Postgres. Bad content fails the upload; only database errors
    retry (with backoff), and a retry finds the upload's results rolled back."""
    pipeline.upload_ingest(upload_id=upload_id)
