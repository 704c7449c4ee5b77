"""Ingest one upload: raw files → XML documents → parsed cases → normalized rows → writer.

Forward-only states: queued → processing → done | failed. Bad input is data, not a retry: it
marks the upload failed with a message and writes no results. Database errors, and the raw
files' storage out of reach (``parity.raw_storage.StorageUnavailable``), propagate so the task
can retry; the results transaction then rolls back whole.
"""

import logging
import time
from collections.abc import Iterator
from functools import lru_cache
from itertools import chain

from django.conf import settings
from django.core.files import File
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from ingest.issue_links import reason_issues_link
from ingest.writer import ResultRow, reasons_seen_update, results_write
from parity.models import Outcome, Run, Upload, UploadFile, UploadStatus
from parity.models.results import MAX_FILE_CHARS
from parity.pure.archives import ArchiveError, iter_xml_documents
from parity.pure.junit import JUnitError, OverLimit, ParsedCase, ParseLimits, iter_case_batches
from parity.pure.normalize import (
    CanonicalReason,
    Rules,
    TestIdentifier,
    canonical_reason,
    document_hint,
)
from parity.raw_storage import StorageUnavailable, raw_open
from parity.services.declarations import hw_classification_sync
from parity.services.lifecycle import (
    run_complete,
    run_parity_refresh,
    run_shards_arrived,
    suite_run_refresh,
)

logger = logging.getLogger(__name__)

OUTCOMES = {label: value for value, label in Outcome.choices}


class BadUpload(Exception):
    """The upload's content cannot be ingested; str() says why, naming the file."""


def upload_ingest(*, upload_id: int) -> None:
    if not _claim(upload_id):
        return
    started = time.monotonic()
    try:
        with transaction.atomic():
            upload = _lock(upload_id)
            if upload is None:
                return  # finished, or another delivery holds it and is still working
            warnings: list[str] = []
            summary = results_write(upload=upload, rows=upload_rows(upload, warnings=warnings))
            reason_issues_link(project=upload.run.project, reason_ids=summary.new_reason_ids)
            _finish(upload, UploadStatus.DONE, counts=summary.counts, warnings=warnings)
            _update_run(upload)
    except BadUpload as exc:
        upload_fail(upload_id=upload_id, message=str(exc))
        logger.info("upload %s failed: %s", upload_id, exc)
        return
    except StorageUnavailable as exc:
        # Not the upload's fault, nor a lost worker's: the attempt is given back, so recovery
        # never fails an upload for an outage of the bucket, however long (the task retries).
        Upload.objects.filter(pk=upload_id, attempts__gt=0).update(attempts=F("attempts") - 1)
        logger.warning("upload %s waits for the raw files' storage: %s", upload_id, exc)
        raise
    reasons_seen_update(reason_ids=summary.seen_reason_ids, seen=upload.run.started_at)
    classes = upload.declarations.get("hw_classification")
    if classes:
        hw_classification_sync(project=upload.run.project, classes=classes)
    logger.info(
        "upload %s done: %s, %d new test ids, in %.2fs",
        upload_id,
        summary.counts,
        summary.test_ids_drawn,
        time.monotonic() - started,
    )


def _lock(upload_id: int) -> Upload | None:
    """The upload, row-locked for this transaction, if it is processing and no live worker
    holds it. The lock is the claim: a redelivered or re-queued task for an upload that a slow
    worker is still ingesting skips it, and a dead worker's lock dies with its connection.
    Only the upload row is locked (``of``), and without its key (``no_key``), so shard uploads
    that insert rows pointing at the same run and project never wait for it."""
    return (
        Upload.objects.select_for_update(skip_locked=True, no_key=True, of=("self",))
        .select_related("run__project", "run__backend")
        .filter(pk=upload_id, status=UploadStatus.PROCESSING)
        .first()
    )


def _update_run(upload: Upload) -> None:
    # Locking the run orders this commit with a concurrent "complete" call: whichever commits
    # second sees the other's work, so parity never misses this upload's results.
    run = Run.objects.select_for_update(no_key=True).get(pk=upload.run_id)
    was_complete = run.complete
    if run.complete:
        run_parity_refresh(run=run)  # a shard that arrived after the run was completed
    elif run_shards_arrived(run=run, upload=upload):
        run_complete(run=run)  # queues its suites' refresh too
    if upload.suite and (was_complete or not run.complete):
        suite_run_refresh(run=run)  # its suite's run may have finished (docs/suites.md)


def upload_rows(
    upload: Upload, *, warnings: list[str] | None = None, rules: Rules | None = None
) -> Iterator[ResultRow]:
    """The upload's rows, streamed; what its files skipped is appended to ``warnings``. Keys
    follow the project's rules, or ``rules`` (a re-key's plan reads stored uploads under both)."""
    # Read everything the rows need from the database now: the rows are consumed while COPY
    # holds the connection, and a query then would break the COPY protocol.
    files = list(upload.files.all())
    identify = TestIdentifier(rules or upload.run.project.normalization())
    return chain.from_iterable(
        _row_batches(
            files,
            identify=identify,
            file_hint=upload.file_hint or None,
            warnings=[] if warnings is None else warnings,
        )
    )


def _row_batches(
    files: list[UploadFile],
    *,
    identify: TestIdentifier,
    file_hint: str | None,
    warnings: list[str],
) -> Iterator[list[ResultRow]]:
    limits = parse_limits()
    number = 0  # of the document in the upload: suites are told apart within one document
    for stored in files:
        with _raw_opened(stored) as raw:
            try:
                documents = iter_xml_documents(
                    stored.name, raw, max_bytes=settings.PARITY_MAX_XML_BYTES, skipped=warnings
                )
                for document in documents:
                    hint = document_hint(document.folder_hint, file_hint, identify.rules)
                    number += 1
                    try:
                        yield from case_rows(
                            iter_case_batches(document.stream, limits=limits),
                            folder_hint=hint,
                            identify=identify,
                            document=number,
                        )
                    except JUnitError as exc:
                        raise BadUpload(f"{document.name}: {exc}") from exc
            except ArchiveError as exc:
                raise BadUpload(f"{stored.name}: {exc}") from exc


def _raw_opened(stored: UploadFile) -> File:
    try:
        return raw_open(stored.raw)
    except FileNotFoundError:
        # Gone from the storage (deleted by hand, or a bucket emptied): no retry brings it back.
        missing = f"{stored.name}: its stored raw file {stored.raw.name} is missing"
        raise BadUpload(missing) from None


def parse_limits() -> ParseLimits:
    return ParseLimits(
        max_message_bytes=settings.PARITY_MAX_MESSAGE_BYTES,
        max_name_chars=settings.PARITY_MAX_NAME_CHARS,
        max_token_bytes=settings.PARITY_MAX_TOKEN_BYTES,
    )


def case_rows(
    batches: Iterator[list[ParsedCase]],
    *,
    folder_hint: str | None,
    identify: TestIdentifier,
    document: int = 0,
) -> Iterator[list[ResultRow]]:
    """The rows of each batch of cases of one document (its number in the upload: suites are
    told apart within one document)."""
    for cases in batches:
        yield _batch_rows(cases, folder_hint=folder_hint, identify=identify, document=document)


def _batch_rows(
    cases: list[ParsedCase], *, folder_hint: str | None, identify: TestIdentifier, document: int
) -> list[ResultRow]:
    # One loop with local names: it runs once per case of the upload.
    places, place_of = identify.places, identify.place
    outcomes, no_reason, tuple_new = OUTCOMES, _NO_REASON, tuple.__new__
    rows: list[ResultRow] = []
    append = rows.append
    for classname, name, file, suite, suite_label, outcome, duration, message in cases:
        # Reporters that write no classname (jest, prove, regrtest) group tests by suite;
        # without it, same-named tests of different suites would merge into one.
        where = (classname or suite, file, folder_hint)
        place = places.get(where) or place_of(*where)
        key, path, class_name, test_name = place.identity(name)
        if len(path) > MAX_FILE_CHARS:
            raise OverLimit(
                f"test {name[:80]!r} names a file of {len(path):,} characters "
                f"({path[:80]}…); the limit is {MAX_FILE_CHARS}"
            )
        if outcome == "passed" or not message:
            reason_kind, reason_text, reason_fp = no_reason
        else:
            reason_kind, reason_text, reason_fp = _reason(
                message, "skip" if outcome == "skipped" else "failure"
            )
        append(
            tuple_new(
                ResultRow,
                (
                    key,
                    path,
                    class_name,
                    test_name,
                    outcomes[outcome],
                    duration,
                    message or "",
                    reason_kind,
                    reason_text,
                    reason_fp,
                    suite_label,
                    document,
                ),
            )
        )
    return rows


_NO_REASON = (None, None, None)


def _reason(message: str, kind: str) -> tuple[str | None, str | None, str | None]:
    reason = _canonical_reason(message, kind)
    if reason is None:
        return _NO_REASON
    return kind, reason.text, reason.fingerprint


@lru_cache(maxsize=4096)
def _canonical_reason(message: str, kind: str) -> CanonicalReason | None:
    # Messages repeat across thousands of cases; canonicalizing each once keeps ingest fast.
    return canonical_reason(message, kind=kind)


def _claim(upload_id: int) -> bool:
    """queued → processing, visible to the API at once, and one more attempt counted. An upload
    already processing may be taken again (its worker died, or recovery queued it); an upload
    a live worker holds is skipped, here and in ``_lock``."""
    claimable = Upload.objects.select_for_update(skip_locked=True, no_key=True).filter(
        pk=upload_id, status__in=[UploadStatus.QUEUED, UploadStatus.PROCESSING]
    )
    with transaction.atomic():  # one UPDATE, its row locked by the subquery (or skipped)
        claimed = Upload.objects.filter(pk__in=claimable.values("pk")).update(
            status=UploadStatus.PROCESSING, started_at=timezone.now(), attempts=F("attempts") + 1
        )
    return claimed > 0


def _finish(upload: Upload, status: str, *, counts: dict[str, int], warnings: list[str]) -> None:
    Upload.objects.filter(pk=upload.pk).update(
        status=status, counts=counts, warnings=warnings, error="", finished_at=timezone.now()
    )


def upload_fail(*, upload_id: int, message: str) -> None:
    """End an upload that cannot be ingested, saying why; its results were never committed.
    Its run manifest was stored when it was received, and counts: when its run is complete
    already (a late shard), the run is recomputed now, as after a late shard ingested."""
    with transaction.atomic():
        failed = Upload.objects.filter(
            pk=upload_id, status__in=[UploadStatus.QUEUED, UploadStatus.PROCESSING]
        ).update(
            status=UploadStatus.FAILED,
            error=message,
            counts={},
            finished_at=timezone.now(),
        )
        run = Run.objects.filter(uploads=upload_id, complete=True).first()
        if failed and run is not None:
            run_parity_refresh(run=run)
        suite = Upload.objects.filter(pk=upload_id).values_list("suite", "run_id").first()
        if failed and suite and suite[0]:
            suite_run_refresh(run=Run(pk=suite[1]))
