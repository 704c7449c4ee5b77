from celery import shared_task
from django.db import DatabaseError

from ingest import pipeline


@shared_task(
    bind=True,
    acks_late=True,
    autoretry_for=(DatabaseError,),
    retry_backoff=5,
    retry_backoff_max=300,
    retry_jitter=True,
    max_retries=5,
)
def upload_ingest(self, upload_id: int) -> None:
    """Adapter: ids in, state in Postgres. Bad content fails the upload; only database errors
    retry (with backoff), and a retry finds the upload's results rolled back."""
    pipeline.upload_ingest(upload_id=upload_id)
