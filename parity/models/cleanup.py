"""What the database cannot cascade: results (no FK constraints, for bulk-load speed) and the raw
files in their storage (``parity.raw_storage``: the disk or a bucket). Receivers, so every way
of deleting (admin, a queryset, a project's cascade) cleans up the same."""

import logging

from django.core.files.storage import Storage
from django.db import DatabaseError, connection, transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from parity.models.results import FileSeconds, Result
from parity.models.runs import RawFileLeft, Run, UploadFile
from parity.models.sql import model_sql
from parity.raw_storage import raw_delete

logger = logging.getLogger(__name__)

# Plain SQL: the ORM would fetch every row first. Naming the run reads only its day's partition,
# where result_run_test serves the lookup.
_RESULTS_DELETE_SQL = model_sql("DELETE FROM {result} WHERE run_id = %s", result=Result)
_FILE_SECONDS_DELETE_SQL = model_sql("DELETE FROM {seconds} WHERE run_id = %s", seconds=FileSeconds)


def results_delete(*, run_id: int) -> int:
    """Delete a run's results, and the file durations the writer summed from them; returns
    how many results."""
    with connection.cursor() as cursor:
        cursor.execute(_FILE_SECONDS_DELETE_SQL, [run_id])
        cursor.execute(_RESULTS_DELETE_SQL, [run_id])
        return cursor.rowcount


@receiver(post_delete, sender=Run, dispatch_uid="parity-run-results-delete")
def run_results_delete(sender, instance: Run, **kwargs) -> None:
    results_delete(run_id=instance.pk)


@receiver(post_delete, sender=UploadFile, dispatch_uid="parity-upload-file-delete")
def upload_file_raw_delete(sender, instance: UploadFile, **kwargs) -> None:
    # Only once the deletion commits: a rolled-back delete must still find its file.
    raw = instance.raw
    if raw.name:
        transaction.on_commit(lambda: raw_file_delete(raw.storage, raw.name))


def raw_file_delete(storage: Storage, name: str) -> None:
    """Delete a raw file whose row is gone (or never committed). One the storage refuses is
    recorded for the beat's sweep to delete later (``RawFileLeft``)."""
    if raw_delete(storage, name):
        return
    try:
        RawFileLeft.objects.get_or_create(name=name)
    except DatabaseError:  # Postgres out of reach too: the log line is all that is left
        logger.exception("raw file %s left in storage and not recorded", name)
