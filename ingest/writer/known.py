"""What one upload's writer knows of its project: test ids by key digest, reason ids by kind and
fingerprint, and ids reserved for the tests and reasons it will add.

Tests are looked up a whole file at a time (its later cases in the upload then resolve without
a query), or by digest for a sliver of a big file. A key is held as the MD5 digest of its text,
16 bytes, which is also what the database holds unique per file (``TestCase.key_digest``): half
what the known tests' keys would take in memory (bench/matrix.md). Ids for new rows
are taken from the tables' own sequences, so a result can name its test before the test row is
written.
"""

import struct
import tempfile

from django.db import models
from psycopg2 import sql

from parity.models import Reason, TestCase
from parity.models.sql import model_sql
from parity.plans import FENCE

# Binary COPY: the (digest, id) pairs arrive as fixed-size records that struct unpacks in C,
# where a fetchall() of them would build a tuple and buffers per test. They land in a temporary
# file, not in memory: psycopg2 hands the file each row (a C call), and the records are then read
# back a piece at a time, so the worker never holds them all beside the dict they fill (held in a
# BytesIO, they raised a large re-ingest's peak memory; bench/matrix.md).
#
# Each file is probed through the (project, file) prefix of the unique index, behind a fence
# (``parity.plans.FENCE``) that keeps it a loop over the files whatever the statistics say.
# Planned freely, on statistics from before a new project's first upload (autovacuum analyzes a
# table only after a tenth of it changed), Postgres read every test of the project and filtered
# them by file, a look-up for each batch that brings new files, and so a first ingest's
# look-ups grew with the tests it had written (bench/matrix.md).
TESTS_OF_FILES = model_sql(
    "SELECT t.key_digest, t.id FROM unnest({files}::text[]) AS wanted(file) "
    "CROSS JOIN LATERAL (SELECT key_digest, id FROM {test} "
    "WHERE project_id = {project} AND file = wanted.file {fence}) t LIMIT {limit}",
    test=TestCase,
    fence=FENCE,
    project=sql.Placeholder("project"),
    files=sql.Placeholder("files"),
    limit=sql.Placeholder("limit"),
)
# A test's key is unique in its file: each digest is looked up with its file, one probe of the
# unique index per test (fenced as above).
TESTS_BY_DIGEST = model_sql(
    "SELECT t.key_digest, t.id "
    "FROM unnest({files}::text[], {digests}::uuid[]) AS wanted(file, digest) "
    "CROSS JOIN LATERAL (SELECT key_digest, id FROM {test} WHERE project_id = {project} "
    "AND file = wanted.file AND key_digest = wanted.digest {fence}) t",
    test=TestCase,
    fence=FENCE,
    project=sql.Placeholder("project"),
    files=sql.Placeholder("files"),
    digests=sql.Placeholder("digests"),
)
_COPY_BINARY = sql.SQL("COPY ({}) TO STDOUT (FORMAT binary)")
# COPY's binary format: a 19-byte header, then per row a field count, and per field its length
# and bytes (a uuid is 16, a bigint 8), then a -1 trailer.
_COPY_HEADER_BYTES = 19
_DIGEST_ID = struct.Struct(">hi16siq")
_RECORDS_READ = _DIGEST_ID.size * 32_768  # bytes a read of the COPY stream asks for
# Files are read whole when together they have at most WHOLE_FILE_SHARE times as many tests as
# the upload has had of each so far, or, while more rows are to come, WHOLE_FILE_TESTS each.
# A test read with its whole file costs a small share of one looked up by its digest (see
# bench/README.md), so a whole file costs at most what the upload's own cases of it would.
WHOLE_FILE_TESTS = 250_000
WHOLE_FILE_SHARE = 8
_REASONS = model_sql(
    "SELECT r.kind, r.fingerprint, r.id FROM {reason} r "
    "JOIN unnest(%(kinds)s::text[], %(fps)s::text[]) AS wanted(kind, fp) "
    "ON r.kind = wanted.kind AND r.fingerprint = wanted.fp "
    "WHERE r.project_id = %(project)s",
    reason=Reason,
)
# Exactly ``count`` values, in increasing order (at most one batch's new rows).
_RESERVE = sql.SQL("SELECT nextval({sequence}::regclass) FROM generate_series(1, %(count)s)")


class KnownIds:
    """Lookups and reservations run between COPY statements, never during one."""

    def __init__(self, cursor, *, project_id: int) -> None:
        self.cursor = cursor
        self.project_id = project_id
        self.tests: dict[bytes, int] = {}  # by key digest: known tests and those reserved
        self.files: set[str] = set()  # files whose every known test is in ``tests``
        self.reasons: dict[tuple[str, str], int] = {}
        self.seen_per_file: dict[str, int] = {}  # held cases of each file, over all rounds
        self._sequences: dict[type[models.Model], str] = {}
        # Closed by close(), with the writer; reused by every lookup of the upload.
        self._records = tempfile.TemporaryFile()  # noqa: SIM115

    def tests_load(self, wanted: dict[str, set[bytes]], *, more_to_come: bool) -> None:
        """Look up the tests of ``wanted`` (digests by file): the files are read whole when they
        are small enough (see WHOLE_FILE_SHARE), so their later cases need no query; the
        digests of files too large for that are looked up one by one."""
        for file, digests in wanted.items():
            self.seen_per_file[file] = self.seen_per_file.get(file, 0) + len(digests)
        floor = WHOLE_FILE_TESTS if more_to_come else 0
        limit = sum(max(floor, WHOLE_FILE_SHARE * self.seen_per_file[file]) for file in wanted)
        read = self._tests_add(TESTS_OF_FILES, {"files": list(wanted), "limit": limit + 1})
        if read <= limit:
            self.files.update(wanted)
        rest = [
            (file, digest.hex())
            for file, digests in wanted.items()
            if file not in self.files
            for digest in digests
            if digest not in self.tests
        ]
        if rest:
            files, digests = zip(*rest, strict=True)
            self._tests_add(TESTS_BY_DIGEST, {"files": list(files), "digests": list(digests)})

    def _tests_add(self, statement: sql.Composed, params: dict) -> int:
        """Read ``statement``'s (digest, id) pairs into ``tests`` by a binary COPY; returns how
        many it read. An id the writer has already (reserved for a test it believed new) stays:
        its results name it."""
        records = self._records
        records.seek(0)
        records.truncate()
        query = self.cursor.mogrify(
            _COPY_BINARY.format(statement), {"project": self.project_id, **params}
        )
        self.cursor.copy_expert(query, records)
        records.seek(_COPY_HEADER_BYTES)
        tests, read, size = self.tests, 0, _DIGEST_ID.size
        while piece := records.read(_RECORDS_READ):
            # The last piece ends with the 2-byte trailer, which no whole record holds.
            whole = len(piece) - len(piece) % size
            for _, _, digest, _, test_id in _DIGEST_ID.iter_unpack(memoryview(piece)[:whole]):
                tests.setdefault(digest, test_id)
                read += 1
        return read

    def close(self) -> None:
        self._records.close()

    def reasons_load(self, wanted: set[tuple[str, str]]) -> None:
        kinds, fps = zip(*wanted, strict=True) if wanted else ((), ())
        params = {"project": self.project_id, "kinds": list(kinds), "fps": list(fps)}
        self.cursor.execute(_REASONS, params)
        for kind, fingerprint, reason_id in self.cursor.fetchall():
            self.reasons[kind, fingerprint] = reason_id

    def reserve(self, model: type[models.Model], count: int) -> range | list[int]:
        """``count`` new ids of ``model``'s table, in increasing order: a range when no other
        session drew from the sequence meanwhile, as is usual."""
        if count <= 0:
            return range(0)
        sequence = self._sequences.get(model)
        if sequence is None:
            self.cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [model._meta.db_table])
            sequence = self._sequences[model] = self.cursor.fetchone()[0]
        self.cursor.execute(_RESERVE.format(sequence=sql.Literal(sequence)), {"count": count})
        ids = [value for (value,) in self.cursor.fetchall()]
        if ids[-1] - ids[0] + 1 == len(ids):
            return range(ids[0], ids[-1] + 1)
        return ids
