"""Writing one upload's results: resolved in Python, COPied straight into the results table.

Each row's test and reason id comes from what the writer knows of the project
(``known.KnownIds``); a new test or reason gets an id reserved from its table's sequence. A case
whose ids need a query (its file not looked up yet, a reason not seen yet, no reserved id left)
is held back; when enough are held, or the rows end, the COPY ends, one round of queries
resolves them all, and the next COPY starts with them. Python parses while Postgres stores, and
memory stays bounded by what is held back plus one id per known test of the files looked up.

What streams is what Postgres spends its time on. Usually that is the results, and the new tests
wait (``spools``) to be inserted at the end. When most of a round's cases are new tests (a first
ingest), storing them costs Postgres several times what their results do: the new tests then
stream straight into their table under a per-project lock (``_TESTS_LOCK``), and the results
wait, in order, for the next results COPY or the end.

Reruns of a test inside one upload: the last occurrence wins. Result ids grow in the order rows
are written, and a held-back case holds back every later case of its test, so the superseded
rows are the ones with the smaller ids; they are deleted after the COPY, only when a key
repeated.

A key that repeats in another suite of the same XML document is not a rerun but a test per
suite (``ingest.normalize.suites``), split as the held cases are resolved (``suites``).

New tests and reasons are added under a lock or in one statement sorted by their unique key, so
concurrent uploads adding the same ones wait for each other instead of deadlocking; one that
lost such a race points its results at the winner's row.
"""

from collections.abc import Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass
from itertools import chain

from django.db import connection
from psycopg2.errors import UniqueViolation

from ingest.memo import Remembered
from ingest.writer.copy_text import NULL, copy_from_chunks, copy_text
from ingest.writer.digests import md5  # the hot loop calls it inline
from ingest.writer.known import KnownIds
from ingest.writer.rows import ResultRow
from ingest.writer.spools import NewTests, Spool
from ingest.writer.suites import LABEL_BITS, LABEL_MASK, SuiteSplits
from parity.models import Outcome, Reason, Result, Run, TestCase, Upload
from parity.models.cleanup import results_delete
from parity.models.sql import model_sql

# Cases held back at most before their ids are looked up: a round of queries per this many
# cases at worst, and this many rows in memory. The first round comes sooner: a held case costs
# half as much again as a streamed one, and most uploads' first cases name most of their files.
HOLD_LIMIT = 20_000
FIRST_HOLD_LIMIT = 1_000
_LINES_PER_CHUNK = 2_000


@dataclass(frozen=True)
class WriteSummary:
    counts: dict[str, int]
    new_reason_ids: list[int]
    seen_reason_ids: list[int]


def results_write(*, upload: Upload, rows: Iterable[ResultRow]) -> WriteSummary:
    """Store one upload's results. Must run inside a transaction (the caller's)."""
    run = upload.run
    # Django's error wrapper: errors of the raw psycopg2 cursor become django.db errors, which
    # the ingest task retries (a dropped connection must not read as bad content).
    with (
        connection.wrap_database_errors,
        connection.cursor() as django_cursor,
        closing(
            UploadWriter(
                django_cursor.cursor,
                project_id=run.project_id,
                run_id=run.pk,
                upload_id=upload.pk,
                seen=run.started_at,
            )
        ) as writer,
    ):
        writer.write(iter(rows))
        return writer.finish()


def results_delete_for_run(*, run: Run) -> int:
    return results_delete(run_id=run.pk)


def outcome_counts(by_outcome: dict[int, int]) -> dict[str, int]:
    counts = {label: by_outcome.get(value, 0) for value, label in Outcome.choices}
    return {"total": sum(counts.values()), **counts}


_COPY_RESULTS = model_sql(
    "COPY {result} (run_id, upload_id, test_id, outcome, duration, message, reason_id) FROM STDIN",
    result=Result,
)


class UploadWriter:
    def __init__(self, cursor, *, project_id: int, run_id: int, upload_id: int, seen) -> None:
        self.cursor = cursor
        self.params = {"project": project_id, "run": run_id, "upload": upload_id, "seen": seen}
        self.known = KnownIds(cursor, project_id=project_id)
        self.line_start = f"{run_id}\t{upload_id}\t"
        self.held: list[ResultRow] = []
        self.held_keys: set[bytes] = set()
        self.hold_limit = min(FIRST_HOLD_LIMIT, HOLD_LIMIT)
        self.rows_done = False
        self.free_test_ids: Iterator[int] = iter(())
        self.reserved: list[range | list[int]] = []  # test ids, as each round reserved them
        self.new_tests = NewTests(project_id=project_id)
        # While an upload adds mostly new tests, they are what Postgres spends its time on: they
        # stream into their table as the rows are parsed, and the results wait (in order).
        self.tests_live = False
        self.tests_streamed = False
        self.tests_race = False  # a streamed test was added by another upload meanwhile
        self.tests_locked = False
        self.results_waiting = Spool()
        self.new_reasons: list[tuple[int, str, str, str]] = []  # id, kind, text, fingerprint
        self.by_outcome = [0] * (max(Outcome.values) + 1)
        self.seen_reason_ids: set[int] = set()
        self.repeated: set[int] = set()  # tests written more than once
        # Durations repeat (pytest and JUnit write milliseconds): each one's COPY text is made
        # once, which costs a third of what making it for every case does.
        self.duration_texts = Remembered(_duration_text, keep=10_000)
        self.suites = SuiteSplits(self.known)

    # --- streaming ----------------------------------------------------------------------------

    def write(self, rows: Iterator[ResultRow]) -> None:
        first: list[ResultRow] = []
        while True:
            if self.tests_live and self._tests_lock_taken():
                self._tests_stream(self._chunks(first, rows, tests_live=True))
            else:
                # Waiting results go first: result ids grow in the order rows were written.
                self.results_waiting.copy_to(self.cursor, _COPY_RESULTS)
                copy_from_chunks(self.cursor, _COPY_RESULTS, self._chunks(first, rows))
            if not self.held:
                return
            first = self._resolve_held()

    def _tests_lock_taken(self) -> bool:
        """Whether this upload holds ``_TESTS_LOCK``, taken now if it is free. While another
        upload holds it, this one goes on parsing and streams its results; its new tests wait,
        to be inserted when it ends."""
        if not self.tests_locked:
            self.cursor.execute(_TESTS_LOCK_TRY, self.params)
            self.tests_locked = self.cursor.fetchone()[0]
        return self.tests_locked

    def _tests_stream(self, chunks: Iterator[bytes]) -> None:
        """COPY the new tests of the next rows straight into their table (their results wait).
        Should another upload have committed one of them since it was looked up, the COPY
        fails whole, and they wait for ``_tests_insert``, as every later new test does."""
        self.cursor.execute("SAVEPOINT ingest_tests")
        try:
            copy_from_chunks(self.cursor, _TESTS_COPY, chunks)
        except UniqueViolation:
            self.cursor.execute("ROLLBACK TO SAVEPOINT ingest_tests")
            for _ in chunks:  # the rest of the rows, had the COPY stopped reading early
                pass
            self.new_tests.streamed_lost()
            self.tests_live, self.tests_race = False, True
            return
        self.cursor.execute("RELEASE SAVEPOINT ingest_tests")
        self.new_tests.streamed_kept()
        self.tests_streamed = True

    def _chunks(
        self, first: list[ResultRow], rows: Iterator[ResultRow], *, tests_live: bool = False
    ) -> Iterator[bytes]:
        """COPY data for ``first`` then ``rows`` (their results, or their new tests while tests
        stream: see ``_chunk``), until the rows end or too many are held.

        The loop runs once per case of the upload, so everything it touches is a local name.
        A case is held back when its digest already is (a rerun must stay behind its first
        run), when its reason was not looked up yet, or when its test is neither known nor
        provably new (its file not read) or no reserved id is left."""
        tests, files, reasons = self.known.tests, self.known.files, self.known.reasons
        held, held_keys, free_ids = self.held, self.held_keys, self.free_test_ids
        seen_reasons, repeated, by_outcome = self.seen_reason_ids, self.repeated, self.by_outcome
        new_test, start = self.new_tests.add, self.line_start
        label_number, rerun_elsewhere = self.suites.number, self.suites.rerun_elsewhere
        bits, mask = LABEL_BITS, LABEL_MASK  # a written test: suites.written(id, label), inlined
        lines: list[str] = []
        chunk_lines, durations, hold_limit = _LINES_PER_CHUNK, self.duration_texts, self.hold_limit
        suite = document = label = None
        for row in chain(first, rows) if first else rows:
            (key, file, _, _, outcome, duration, message, reason_kind, _, reason_fp, in_suite,
             in_document) = row  # fmt: skip
            if in_suite is not suite or in_document != document:  # a suite's cases come together
                suite, document = in_suite, in_document
                label = label_number(suite, document)
            digest = md5(key.encode()).digest()
            waits = (held_keys and digest in held_keys) or (
                reason_fp is not None and (reason_kind, reason_fp) not in reasons
            )
            if waits:
                test_id = None
            else:
                test_id = tests.get(digest)
                if test_id is None:
                    if file in files and (test_id := next(free_ids, None)) is not None:
                        new_test(test_id, row)
                        tests[digest] = -(test_id << bits | label)
                elif test_id > 0:
                    tests[digest] = -(test_id << bits | label)
                elif -test_id & mask == label or rerun_elsewhere(digest, test_id, label):
                    test_id = -test_id >> bits
                    repeated.add(test_id)
                else:
                    test_id = None  # the key in another suite: _resolve_held splits it
            if test_id is None:
                held.append(row)
                held_keys.add(digest)
                if len(held) >= hold_limit:
                    break
                continue
            if reason_fp is None:
                reason_id = NULL
            else:
                reason_id = reasons[reason_kind, reason_fp]
                seen_reasons.add(reason_id)
            by_outcome[outcome] += 1
            lines.append(
                f"{start}{test_id}\t{outcome}\t{durations[duration]}\t"
                f"{copy_text(message) if message else ''}\t{reason_id}\n"
            )
            if len(lines) >= chunk_lines:
                yield self._chunk(lines, tests_live)
        else:
            self.rows_done = True
        yield self._chunk(lines, tests_live)

    def _chunk(self, lines: list[str], tests_live: bool) -> bytes:
        """What the COPY gets next of the result lines written (which it then holds no more):
        those lines, or the new tests while tests stream (the lines then wait)."""
        data = "".join(lines).encode()
        if tests_live:
            self.results_waiting.write(data, len(lines))
            data = self.new_tests.take()
        else:
            self.new_tests.flush()
        lines.clear()
        return data

    def _resolve_held(self) -> list[ResultRow]:
        """Look up or reserve every id the held rows need; they are written next."""
        held, self.held, self.held_keys = self.held, [], set()
        self.hold_limit = HOLD_LIMIT
        known = self.known
        held_digests, firsts = self.suites.split(held)
        digests = dict(zip(held_digests, held, strict=True))
        for first in firsts:
            digests.setdefault(first.digest, first.row)
        wanted: dict[str, set[bytes]] = {}
        for digest, row in digests.items():
            if digest not in known.tests and row.file not in known.files:
                wanted.setdefault(row.file, set()).add(digest)
        if wanted:
            known.tests_load(wanted, more_to_come=not self.rows_done)
        new = [digest for digest in digests if digest not in known.tests]
        self.tests_live = 2 * len(new) > len(digests) and not self.tests_race
        self._reserve_tests(len(new))
        for digest in new:
            test_id = next(self.free_test_ids)
            self.new_tests.add(test_id, digests[digest])
            known.tests[digest] = test_id
        self.suites.moves_add(firsts, self.repeated)
        self._resolve_reasons(held)
        return held

    def _reserve_tests(self, needed: int) -> None:
        """Ids for ``needed`` new tests and, while the rows go on, as many again as reserved so
        far (at least HOLD_LIMIT): a first ingest of a large suite takes a few rounds, and ids
        left unused are only gaps in the sequence."""
        if not needed:
            return
        reserved = sum(len(ids) for ids in self.reserved)
        extra = 0 if self.rows_done else max(reserved, HOLD_LIMIT)
        ids = self.known.reserve(TestCase, needed + extra)
        self.reserved.append(ids)
        self.free_test_ids = chain(iter(ids), self.free_test_ids)

    def _resolve_reasons(self, held: list[ResultRow]) -> None:
        reasons = self.known.reasons
        wanted = {
            (row.reason_kind, row.reason_fp): row.reason_text
            for row in held
            if row.reason_fp is not None and (row.reason_kind, row.reason_fp) not in reasons
        }
        if not wanted:
            return
        self.known.reasons_load(set(wanted))
        new = [key for key in wanted if key not in reasons]
        for reason_id, (kind, fingerprint) in zip(
            self.known.reserve(Reason, len(new)), new, strict=True
        ):
            reasons[kind, fingerprint] = reason_id
            self.new_reasons.append((reason_id, kind, wanted[kind, fingerprint], fingerprint))

    # --- after the COPY -----------------------------------------------------------------------

    def finish(self) -> WriteSummary:
        self.results_waiting.copy_to(self.cursor, _COPY_RESULTS)
        if self.suites.moves:
            self.suites.results_move(self.cursor, self.params)
            if self.tests_streamed:
                self._streamed_plain_tests_delete()
        if self.repeated:
            self._reruns_collapse()
        if self.new_tests.count:
            self._tests_insert()
        new_reason_ids = self._reasons_insert() if self.new_reasons else []
        by_outcome = dict(enumerate(self.by_outcome))
        return WriteSummary(
            counts=outcome_counts(by_outcome),
            new_reason_ids=new_reason_ids,
            seen_reason_ids=sorted(self.seen_reason_ids),
        )

    def _reruns_collapse(self) -> None:
        """Keep each repeated test's last result, flagged flaky when the runs disagreed; delete the
        earlier ones, which no longer count nor name reasons."""
        self.cursor.execute(_RERUNS_COLLAPSE, {**self.params, "tests": sorted(self.repeated)})
        dropped_reasons = set()
        for outcome, reason_id in self.cursor.fetchall():
            self.by_outcome[outcome] -= 1
            if reason_id is not None:
                dropped_reasons.add(reason_id)
        if dropped_reasons:
            self.cursor.execute(_REASONS_STILL_NAMED, {**self.params, "ids": list(dropped_reasons)})
            still = {row[0] for row in self.cursor.fetchall()}
            self.seen_reason_ids -= dropped_reasons - still

    def close(self) -> None:
        self.new_tests.close()
        self.results_waiting.close()

    def _streamed_plain_tests_delete(self) -> None:
        """The plain tests of keys split by suite that this upload streamed in have no result
        left (the ones still waiting are dropped in ``_tests_insert``)."""
        new_plain = [
            plain for plain, _ in self.suites.moves if any(plain in ids for ids in self.reserved)
        ]
        if new_plain:
            self.cursor.execute(_STREAMED_PLAIN_TESTS_DELETE, {**self.params, "ids": new_plain})

    def _tests_insert(self) -> None:
        if not self.tests_locked:
            self.cursor.execute(_TESTS_LOCK, self.params)
        if not self.suites.moves and not self.tests_race and self._tests_copy():
            return
        self.cursor.execute(_NEW_TESTS_DDL)
        expected = self.new_tests.count
        self.new_tests.copy_to(self.cursor, "COPY ingest_new_tests FROM STDIN")
        if self.suites.moves:
            expected -= self.suites.new_plain_tests_drop(self.cursor)
        self.cursor.execute(_TESTS_INSERT, self.params)
        if self.cursor.rowcount < expected:
            # Another upload added some of the same tests first: use its rows.
            self.cursor.execute(_RESULTS_TO_EXISTING_TESTS, self.params)

    def _tests_copy(self) -> bool:
        """COPY the new tests straight into their table; False, with nothing written, when one
        was committed by another upload since this one looked it up (then they go in by
        ``INSERT … ON CONFLICT``, a third of the speed). Under ``_TESTS_LOCK`` no other upload
        holds uncommitted tests of the project, so the COPY never waits on one."""
        self.cursor.execute("SAVEPOINT ingest_tests")
        try:
            self.new_tests.copy_to(self.cursor, _TESTS_COPY)
        except UniqueViolation:
            self.cursor.execute("ROLLBACK TO SAVEPOINT ingest_tests")
            return False
        self.cursor.execute("RELEASE SAVEPOINT ingest_tests")
        return True

    def _reasons_insert(self) -> list[int]:
        ids, kinds, texts, fps = (list(column) for column in zip(*self.new_reasons, strict=True))
        columns = {"ids": ids, "kinds": kinds, "texts": texts, "fps": fps}
        self.cursor.execute(_REASONS_INSERT, {**self.params, **columns})
        inserted = [row[0] for row in self.cursor.fetchall()]
        if len(inserted) < len(ids):
            # Another upload added some of the same reasons first: use its rows.
            self.cursor.execute(_RESULTS_TO_EXISTING_REASONS, {**self.params, **columns})
            for lost, winner in self.cursor.fetchall():
                if lost in self.seen_reason_ids:
                    self.seen_reason_ids.discard(lost)
                    self.seen_reason_ids.add(winner)
        return inserted


def _duration_text(duration: float | None) -> str:
    return NULL if duration is None else repr(duration)


# A test's last result stays, flagged flaky when its runs in the upload disagreed (failed, then
# passed); the earlier ones go, and say what they counted.
_RERUNS_COLLAPSE = model_sql(
    """
    WITH ranked AS (
        SELECT id, row_number() OVER (PARTITION BY test_id ORDER BY id DESC) AS newer,
               min(outcome) OVER (PARTITION BY test_id)
                   <> max(outcome) OVER (PARTITION BY test_id) AS flaky
        FROM {result}
        WHERE run_id = %(run)s AND test_id = ANY(%(tests)s) AND upload_id = %(upload)s
    ), flagged AS (
        UPDATE {result} r SET flaky = true FROM ranked
        WHERE r.id = ranked.id AND ranked.newer = 1 AND ranked.flaky
    )
    DELETE FROM {result} r USING ranked
    WHERE r.id = ranked.id AND ranked.newer > 1
    RETURNING r.outcome, r.reason_id
    """,
    result=Result,
)

_REASONS_STILL_NAMED = model_sql(
    "SELECT DISTINCT reason_id FROM {result} "
    "WHERE run_id = %(run)s AND upload_id = %(upload)s AND reason_id = ANY(%(ids)s)",
    result=Result,
)

# Temporary tables live per connection; DROP first because a surrounding transaction (tests,
# re-ingest of a whole run) can write several uploads before ON COMMIT DROP fires.
_NEW_TESTS_DDL = """
DROP TABLE IF EXISTS ingest_new_tests;
CREATE TEMP TABLE ingest_new_tests (
    id bigint, project_id bigint, key text, file text, class_name text, name text
) ON COMMIT DROP;
"""

# One upload of a project adds tests at a time, from its first streamed round or its insert
# until it commits: concurrent shards adding the same tests wait for each other instead of
# deadlocking, and none meets another's uncommitted tests (see _tests_copy). Shards whose tests
# are known never take it.
_TESTS_LOCK = "SELECT pg_advisory_xact_lock(hashtext('parity.tests_insert'), %(project)s::int)"
_TESTS_LOCK_TRY = (
    "SELECT pg_try_advisory_xact_lock(hashtext('parity.tests_insert'), %(project)s::int)"
)

_TESTS_COLUMNS = "(id, project_id, key, file, class_name, name)"  # created_at: its db default

_TESTS_COPY = model_sql(f"COPY {{test}} {_TESTS_COLUMNS} FROM STDIN", test=TestCase)

_STREAMED_PLAIN_TESTS_DELETE = model_sql(
    "DELETE FROM {test} WHERE project_id = %(project)s AND id = ANY(%(ids)s::bigint[])",
    test=TestCase,
)

_TESTS_INSERT = model_sql(
    f"""
    INSERT INTO {{test}} {_TESTS_COLUMNS}
    SELECT id, project_id, key, file, class_name, name FROM ingest_new_tests
    ON CONFLICT (project_id, file, key_digest) DO NOTHING
    """,
    test=TestCase,
)

_RESULTS_TO_EXISTING_TESTS = model_sql(
    """
    UPDATE {result} r SET test_id = t.id
    FROM ingest_new_tests n
    JOIN {test} t
      ON t.project_id = %(project)s AND t.file = n.file AND t.key_digest = md5(n.key)::uuid
    WHERE r.run_id = %(run)s AND r.test_id = n.id AND r.upload_id = %(upload)s AND t.id <> n.id
    """,
    result=Result,
    test=TestCase,
)

_REASONS_INSERT = model_sql(
    """
    INSERT INTO {reason} (id, project_id, kind, text, fingerprint, first_seen, last_seen)
    SELECT id, %(project)s, kind, text, fp, %(seen)s, %(seen)s
    FROM unnest(%(ids)s::bigint[], %(kinds)s::text[], %(texts)s::text[], %(fps)s::text[])
         AS new(id, kind, text, fp)
    ORDER BY kind, fp
    ON CONFLICT (project_id, kind, fingerprint) DO NOTHING
    RETURNING id
    """,
    reason=Reason,
)

_RESULTS_TO_EXISTING_REASONS = model_sql(
    """
    WITH lost AS (
        SELECT new.id AS lost, winner.id AS winner
        FROM unnest(%(ids)s::bigint[], %(kinds)s::text[], %(fps)s::text[]) AS new(id, kind, fp)
        JOIN {reason} winner
          ON winner.project_id = %(project)s AND winner.kind = new.kind
         AND winner.fingerprint = new.fp AND winner.id <> new.id
    ), moved AS (
        UPDATE {result} r SET reason_id = lost.winner FROM lost
        WHERE r.run_id = %(run)s AND r.upload_id = %(upload)s AND r.reason_id = lost.lost
    )
    SELECT lost, winner FROM lost
    """,
    result=Result,
    reason=Reason,
)
