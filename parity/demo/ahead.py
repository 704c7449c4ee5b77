"""The demo's uploads, made in another process while this one ingests them: making the files
takes an eighth of the demo's load, and ingesting them leaves a core to spare."""

from __future__ import annotations

import datetime
import multiprocessing
from collections.abc import Iterator
from typing import Any

from parity.demo.scenario import DemoUpload, demo_uploads

_QUEUED_UPLOADS = 16  # made ahead at most: a few MB waiting


def demo_uploads_ahead(
    fixture: dict[str, Any], *, days: int, end: datetime.date
) -> Iterator[DemoUpload]:
    """``demo_uploads``, in the same order; an error making them is raised here."""
    context = multiprocessing.get_context()
    queue = context.Queue(_QUEUED_UPLOADS)
    # The maker uses no database, and must not: forked, it holds this process's connections,
    # which closing there would close here (so it leaves them alone and exits without cleanup).
    maker = context.Process(target=_make, args=(queue, fixture, days, end), daemon=True)
    maker.start()
    try:
        while (item := queue.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        maker.terminate()
        maker.join()


def _make(queue, fixture: dict[str, Any], days: int, end: datetime.date) -> None:
    try:
        for upload in demo_uploads(fixture, days=days, end=end):
            queue.put(upload)
    except Exception as exc:  # handed to the consumer, which raises it
        queue.put(exc)
    queue.put(None)
