"""The one place that writes test results: COPY into a staging table, then set-based SQL.

Reruns of a test inside one upload collapse to their last occurrence, test cases and reasons
are upserted, and results are inserted in one statement, all inside the caller's transaction.
Python memory stays flat however large the upload: rows stream through COPY.
"""

import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

import psycopg2
from django.db import connection
from psycopg2 import sql

from parity.models import Outcome, Reason, Result, Run, TestCase, Upload
from parity.models.cleanup import results_delete
from parity.models.sql import model_sql

STAGING_COLUMNS = (
    "seq",
    "key",
    "file",
    "class_name",
    "name",
    "outcome",
    "duration",
    "message",
    "reason_kind",
    "reason_text",
    "reason_fp",
)


class ResultRow(NamedTuple):
    """One stored result, in STAGING_COLUMNS order after the sequence number."""

    key: str
    file: str
    class_name: str
    name: str
    outcome: int
    duration: float | None
    message: str
    reason_kind: str | None = None
    reason_text: str | None = None
    reason_fp: str | None = None


@dataclass(frozen=True)
class WriteSummary:
    counts: dict[str, int]
    new_reason_ids: list[int]
    seen_reason_ids: list[int]


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\x00": ""})


def _copy_lines(rows: Iterable[ResultRow]) -> Iterator[str]:
    """COPY text format: tab-separated, \\N for NULL, backslash escapes in text."""
    for seq, row in enumerate(rows):
        fields = [
            "\\N" if v is None else v.translate(_COPY_ESCAPES) if isinstance(v, str) else str(v)
            for v in row
        ]
        yield f"{seq}\t" + "\t".join(fields) + "\n"


class LineReader(io.RawIOBase):
    """A read()-able view of an iterator of text lines, for psycopg2's copy_expert."""

    def __init__(self, lines: Iterator[str]) -> None:
        self._lines = lines
        self._rest = b""
        self.error: Exception | None = None

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        wanted = size if size > 0 else 1 << 20
        parts, filled = [self._rest], len(self._rest)
        while filled < wanted:
            try:
                line = next(self._lines, None)
            except Exception as exc:
                # psycopg2 turns this into QueryCanceled; keep the original for the caller.
                self.error = exc
                raise
            if line is None:
                break
            encoded = line.encode()
            parts.append(encoded)
            filled += len(encoded)
        chunk = b"".join(parts)
        self._rest = chunk[wanted:]
        return chunk[:wanted]


def results_write(*, upload: Upload, rows: Iterable[ResultRow]) -> WriteSummary:
    """Store one upload's results. Must run inside a transaction (the caller's)."""
    run: Run = upload.run
    params = {"project": run.project_id, "run": run.pk, "upload": upload.pk, "seen": run.started_at}
    # Django's error wrapper: errors of the raw psycopg2 cursor become django.db errors, which
    # the ingest task retries (a dropped connection must not read as bad content).
    with connection.wrap_database_errors, connection.cursor() as django_cursor:
        cursor = django_cursor.cursor
        _staging_create(cursor)
        _copy_rows(cursor, rows)
        _staging_dedupe(cursor)
        _tests_upsert(cursor, params)
        new_reason_ids = _reasons_insert(cursor, params)
        by_outcome, seen_reason_ids = _results_insert(cursor, params)
    return WriteSummary(
        counts=outcome_counts(by_outcome),
        new_reason_ids=new_reason_ids,
        seen_reason_ids=sorted(seen_reason_ids),
    )


def outcome_counts(by_outcome: dict[int, int]) -> dict[str, int]:
    counts = {label: by_outcome.get(value, 0) for value, label in Outcome.choices}
    return {"total": sum(counts.values()), **counts}


def results_delete_for_run(*, run: Run) -> int:
    return results_delete(run_id=run.pk)


# Temporary tables live per connection; DROP first because a surrounding transaction (tests,
# re-ingest of a whole run) can write several uploads before ON COMMIT DROP fires.
_STAGING_DDL = """
DROP TABLE IF EXISTS ingest_staging, ingest_final;
CREATE TEMP TABLE ingest_staging (
    seq bigint, key text, file text, class_name text, name text, outcome smallint,
    duration double precision, message text, reason_kind text, reason_text text, reason_fp text
) ON COMMIT DROP;
"""


def _staging_create(cursor) -> None:
    cursor.execute(_STAGING_DDL)


_COPY_SQL = sql.SQL("COPY ingest_staging ({}) FROM STDIN").format(
    sql.SQL(", ").join(map(sql.Identifier, STAGING_COLUMNS))
)


def _copy_rows(cursor, rows: Iterable[ResultRow]) -> None:
    reader = LineReader(_copy_lines(rows))
    try:
        cursor.copy_expert(_COPY_SQL, reader, size=1 << 20)
    except psycopg2.Error:
        if reader.error is not None:
            raise reader.error from None
        raise


# Reruns of a test inside one upload: the last occurrence wins.
_DEDUPE_SQL = """
CREATE TEMP TABLE ingest_final ON COMMIT DROP AS
SELECT DISTINCT ON (key) * FROM ingest_staging ORDER BY key, seq DESC;
"""


def _staging_dedupe(cursor) -> None:
    cursor.execute(_DEDUPE_SQL)


# Known tests are filtered by an anti-join first: most of a suite exists already, and a plain
# ON CONFLICT pays a speculative insertion for each of them (about 5x slower measured).
_UPSERT_TESTS_SQL = model_sql(
    """
    INSERT INTO {test} (project_id, key, file, class_name, name, created_at)
    SELECT %(project)s, key, file, class_name, name, now() FROM ingest_final f
    WHERE NOT EXISTS (
        SELECT 1 FROM {test} t
        WHERE t.project_id = %(project)s AND t.key_digest = md5(f.key)::uuid AND t.key = f.key
    )
    ORDER BY key
    ON CONFLICT (project_id, key_digest) DO NOTHING;
    """,
    test=TestCase,
)


def _tests_upsert(cursor, params: dict) -> None:
    cursor.execute(_UPSERT_TESTS_SQL, params)


_INSERT_REASONS_SQL = model_sql(
    """
    INSERT INTO {reason} (project_id, kind, text, fingerprint, first_seen, last_seen)
    SELECT DISTINCT ON (reason_kind, reason_fp) %(project)s, reason_kind, reason_text, reason_fp,
           %(seen)s, %(seen)s
    FROM ingest_final WHERE reason_fp IS NOT NULL
    ORDER BY reason_kind, reason_fp
    ON CONFLICT (project_id, kind, fingerprint) DO NOTHING
    RETURNING id;
    """,
    reason=Reason,
)


def _reasons_insert(cursor, params: dict) -> list[int]:
    """Insert the reasons the project has not seen; returns their ids."""
    cursor.execute(_INSERT_REASONS_SQL, params)
    return [row[0] for row in cursor.fetchall()]


_INSERT_RESULTS_SQL = model_sql(
    """
    WITH inserted AS (
        INSERT INTO {result} (run_id, upload_id, test_id, outcome, duration, message, reason_id)
        SELECT %(run)s, %(upload)s, t.id, f.outcome, f.duration, coalesce(f.message, ''), r.id
        FROM ingest_final f
        JOIN {test} t
          ON t.project_id = %(project)s AND t.key_digest = md5(f.key)::uuid AND t.key = f.key
        LEFT JOIN {reason} r
               ON r.project_id = %(project)s AND r.kind = f.reason_kind
              AND r.fingerprint = f.reason_fp
        RETURNING outcome, reason_id
    )
    SELECT outcome, count(*), array_remove(array_agg(DISTINCT reason_id), NULL)
    FROM inserted GROUP BY outcome;
    """,
    result=Result,
    test=TestCase,
    reason=Reason,
)


def _results_insert(cursor, params: dict) -> tuple[dict[int, int], set[int]]:
    """Insert the results; returns their count by outcome and the reasons they name."""
    cursor.execute(_INSERT_RESULTS_SQL, params)
    by_outcome, seen_reason_ids = {}, set()
    for outcome, count, reason_ids in cursor.fetchall():
        by_outcome[outcome] = count
        seen_reason_ids.update(reason_ids)
    return by_outcome, seen_reason_ids


_TOUCH_REASONS_SQL = model_sql(
    """
    WITH locked AS (
        SELECT id FROM {reason}
        WHERE id = ANY(%(ids)s) AND (first_seen > %(seen)s OR last_seen < %(seen)s)
        ORDER BY id
        FOR NO KEY UPDATE
    )
    UPDATE {reason} r
    SET first_seen = least(r.first_seen, %(seen)s), last_seen = greatest(r.last_seen, %(seen)s)
    FROM locked WHERE r.id = locked.id;
    """,
    reason=Reason,
)


def reasons_seen_update(*, reason_ids: list[int], seen) -> None:
    """Widen the reasons' first/last seen to ``seen``. Run after the results commit, in id
    order: concurrent shards share reasons, and holding their rows until each shard's commit
    would serialize ingest (and, in arbitrary order, deadlock it)."""
    if not reason_ids:
        return
    with connection.cursor() as cursor:
        cursor.execute(_TOUCH_REASONS_SQL, {"ids": sorted(reason_ids), "seen": seen})
