"""What one upload's writer knows of its project: test ids by key digest, reason ids by kind and
fingerprint, and ids reserved for the tests and reasons it will add.

Tests are looked up a whole file at a time while a large upload streams (its later cases of that
file then resolve without a query), or by digest for what a small upload, or a sliver of a big
file, holds. A key is held
as the MD5 digest of its text, 16 bytes, which is also what the database holds unique per
project (``TestCase.key_digest``): a million known tests take about 120 MB, where their keys
would take twice that. Ids for new rows are taken from the tables' own sequences, so a result
can name its test before the test row is written.
"""

import io
import struct

from django.db import models
from psycopg2 import sql

from parity.models import Reason, TestCase
from parity.models.sql import model_sql

# Binary COPY: a million (digest, id) pairs arrive as fixed-size records that struct unpacks in
# C, where a fetchall() of them would build a million tuples and buffers. Files are read up to a
# cap each: a file far larger than what the upload holds of it is not read through.
_TESTS_OF_FILES = model_sql(
    """
    COPY (
        SELECT wanted.n, t.key_digest, t.id
        FROM unnest({files}::text[], {caps}::bigint[]) WITH ORDINALITY AS wanted(file, cap, n)
        CROSS JOIN LATERAL (
            SELECT key_digest, id FROM {test}
            WHERE project_id = {project} AND file = wanted.file
            LIMIT wanted.cap + 1
        ) t
    ) TO STDOUT (FORMAT binary)
    """,
    test=TestCase,
    project=sql.Placeholder("project"),
    files=sql.Placeholder("files"),
    caps=sql.Placeholder("caps"),
)
_TESTS_BY_DIGEST = model_sql(
    "COPY (SELECT 0::bigint, key_digest, id FROM {test} "
    "WHERE project_id = {project} AND key_digest = ANY({digests}::uuid[])) "
    "TO STDOUT (FORMAT binary)",
    test=TestCase,
    project=sql.Placeholder("project"),
    digests=sql.Placeholder("digests"),
)
# COPY's binary format: a 19-byte header, then per row a field count, and per field its length
# and bytes (a bigint is 8, a uuid 16), then a -1 trailer.
_COPY_HEADER_BYTES = 19
_FILE_DIGEST_ID = struct.Struct(">hiqi16siq")
# A file is read whole when it has at most this many tests, or at most WHOLE_FILE_SHARE times
# as many as the upload has had of it so far: reading it then costs within a few times what
# looking up the upload's own cases of it would.
WHOLE_FILE_TESTS = 250_000
WHOLE_FILE_SHARE = 8
_REASONS = model_sql(
    "SELECT r.kind, r.fingerprint, r.id FROM {reason} r "
    "JOIN unnest(%(kinds)s::text[], %(fps)s::text[]) AS wanted(kind, fp) "
    "ON r.kind = wanted.kind AND r.fingerprint = wanted.fp "
    "WHERE r.project_id = %(project)s",
    reason=Reason,
)
# One statement whatever the count: the bounds when the values came out contiguous (no other
# session drew from the sequence meanwhile), else every value.
_RESERVE = sql.SQL(
    "SELECT max(v) - min(v) + 1 = count(*), min(v), max(v), "
    "CASE WHEN max(v) - min(v) + 1 = count(*) THEN NULL ELSE array_agg(v ORDER BY v) END "
    "FROM (SELECT nextval({sequence}::regclass) AS v FROM generate_series(1, %(count)s)) s"
)


class KnownIds:
    """Lookups and reservations run between COPY statements, never during one."""

    def __init__(self, cursor, *, project_id: int) -> None:
        self.cursor = cursor
        self.project_id = project_id
        self.tests: dict[bytes, int] = {}  # the writer negates an id once it wrote the test
        self.files: set[str] = set()  # files whose every known test is in ``tests``
        self.reasons: dict[tuple[str, str], int] = {}
        self.seen_per_file: dict[str, int] = {}  # held cases of each file, over all rounds
        self._sequences: dict[type[models.Model], str] = {}

    def tests_load(self, wanted: dict[str, set[bytes]], *, more_to_come: bool) -> None:
        """Look up the tests of ``wanted`` (digests by file). While more rows are to come, each
        file is read whole (see WHOLE_FILE_TESTS), so its later cases need no query; the
        digests of a file too large for that, and of the last rows, are looked up one by one."""
        rest = [digest for file, digests in wanted.items() for digest in digests]
        if more_to_come:
            files = list(wanted)
            for file in files:
                self.seen_per_file[file] = self.seen_per_file.get(file, 0) + len(wanted[file])
            caps = [
                max(WHOLE_FILE_TESTS, WHOLE_FILE_SHARE * self.seen_per_file[file]) for file in files
            ]
            found = self._tests_add(_TESTS_OF_FILES, {"files": files, "caps": caps})
            whole = {
                file
                for n, (file, cap) in enumerate(zip(files, caps, strict=True), 1)
                if found.get(n, 0) <= cap
            }
            self.files |= whole
            rest = [digest for digest in rest if digest not in self.tests]
        if rest:
            self._tests_add(_TESTS_BY_DIGEST, {"digests": [digest.hex() for digest in rest]})

    def _tests_add(self, statement: sql.Composed, params: dict) -> dict[int, int]:
        """Run a COPY of (file number, digest, id) into ``tests``; returns rows per number."""
        out = io.BytesIO()
        query = self.cursor.mogrify(statement, {"project": self.project_id, **params})
        self.cursor.copy_expert(query, out)
        rows = out.getbuffer()[_COPY_HEADER_BYTES:-2]
        tests, found = self.tests, {}
        for _, _, n, _, digest, _, test_id in _FILE_DIGEST_ID.iter_unpack(rows):
            tests.setdefault(digest, test_id)  # an entry already there may be negated
            found[n] = found.get(n, 0) + 1
        rows.release()
        return found

    def reasons_load(self, wanted: set[tuple[str, str]]) -> None:
        kinds, fps = zip(*wanted, strict=True) if wanted else ((), ())
        params = {"project": self.project_id, "kinds": list(kinds), "fps": list(fps)}
        self.cursor.execute(_REASONS, params)
        for kind, fingerprint, reason_id in self.cursor.fetchall():
            self.reasons[kind, fingerprint] = reason_id

    def reserve(self, model: type[models.Model], count: int) -> range | list[int]:
        """``count`` new ids of ``model``'s table, in increasing order."""
        if count <= 0:
            return range(0)
        sequence = self._sequences.get(model)
        if sequence is None:
            self.cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [model._meta.db_table])
            sequence = self._sequences[model] = self.cursor.fetchone()[0]
        self.cursor.execute(_RESERVE.format(sequence=sql.Literal(sequence)), {"count": count})
        contiguous, low, high, values = self.cursor.fetchone()
        return range(low, high + 1) if contiguous else values
