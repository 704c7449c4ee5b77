"""The raw files of uploads, kept for re-ingest: written, read and deleted through Django's
storage API only, never by a local path. The default storage is ``MEDIA_ROOT`` on a laptop and
in the demo, or an S3-compatible bucket (``PARITY_S3_BUCKET``), so web and workers may run on
hosts that share only Postgres, Redis and the bucket (docs/operations.md, "Object storage").

A storage out of reach is one exception, ``StorageUnavailable``: the API answers it 503 with
``Retry-After`` (``parity.web.unavailable``) and the ingest task retries it. A missing file is
not one: it stays ``FileNotFoundError``, which no retry mends.
"""

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from django.core.files import File
from django.core.files.storage import Storage
from django.db.models.fields.files import FieldFile

logger = logging.getLogger(__name__)


class StorageUnavailable(Exception):
    """The raw files' storage could not be reached (or refused the request); it may pass."""


def _storage_errors() -> tuple[type[BaseException], ...]:
    if "storages.backends.s3" not in sys.modules:
        return (OSError,)  # the filesystem: a full or failing disk; boto3 is never imported
    from boto3.exceptions import Boto3Error
    from botocore.exceptions import BotoCoreError, ClientError

    return (OSError, BotoCoreError, ClientError, Boto3Error)


@contextmanager
def storage_reached(what: str) -> Iterator[None]:
    """Run the block; what the storage raises for being out of reach becomes
    ``StorageUnavailable`` naming ``what``. ``FileNotFoundError`` passes as it is."""
    try:
        yield
    except FileNotFoundError:
        raise
    except _storage_errors() as exc:
        raise StorageUnavailable(f"{what}: {type(exc).__name__}: {exc}") from exc


def raw_save(field: FieldFile, *, name: str, content: File) -> str:
    """Store ``content`` as the field's file (the model is not saved); its stored name."""
    with storage_reached(f"storing {name}"):
        field.save(name, content, save=False)
    return field.name


def raw_open(field: FieldFile) -> File:
    """The stored file, open for reading, its bytes already fetched: a bucket lost mid-ingest
    fails here, before any row is written, and not inside the parser."""
    with storage_reached(f"reading {field.name}"):
        opened = field.storage.open(field.name, "rb")
        try:
            opened.read(0)  # an S3 object is downloaded (to memory or a temporary file) here
        except BaseException:
            opened.close()
            raise
    return opened


def raw_delete(storage: Storage, name: str) -> bool:
    """Delete one stored file; False (logged) when the storage could not be reached. Only after
    its row's deletion committed: the row is gone either way, and a file left behind is
    garbage, never a row without its file."""
    try:
        with storage_reached(f"deleting {name}"):
            storage.delete(name)
    except StorageUnavailable as exc:
        logger.warning("raw file left in storage: %s", exc)
        return False
    return True
