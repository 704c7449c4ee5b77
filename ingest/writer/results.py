"""Writing one upload's results: resolved in Python, COPied straight into the results table.

The rows come in batches of ``BATCH_CASES``. For each batch:

1. ``suites.Placement`` tells which test each case is (a rerun, or a test per suite);
2. one round of queries looks up what the writer does not know yet (``known.KnownIds``): the
   tests of files it has not read, reasons it has not seen, and ids for the new ones, exactly as
   many as are new (a result names its test before the test row exists);
3. its results go to their table in one COPY, and while Postgres stores them the parser reads
   the next batch (``_parsing_meanwhile``).

Memory stays bounded by one batch plus one id per test of the files read.

New tests are inserted at the end, under the project's tests lock (``NewTests.AT_END``), in one
COPY or, when another upload added some of them meanwhile, by ``INSERT … ON CONFLICT``; results
that named a lost race's id then move to the winner's row. When a batch is mostly new tests (a
first ingest) and the lock is free, the upload takes it until it commits (``NewTests.PER_BATCH``):
each batch's new tests are COPied before its results, storing them overlaps parsing, and no other
upload can add tests meanwhile. Concurrent uploads adding the same tests thus wait for each other
instead of deadlocking; new reasons go in one statement sorted by their unique key, for the same
reason.

Reruns of a test inside one upload: the last occurrence wins. Result ids grow in the order rows
are written, so the superseded rows are the ones with the smaller ids; they are deleted after the
COPY, only for tests that repeated. A key split by suite moves the results its plain test got to
its first suite's test, after the COPY.
"""

import enum
import gc
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from itertools import islice

from django.db import connection
from psycopg2 import sql
from psycopg2.errors import UniqueViolation

from ingest.writer.copy_text import NULL, copy_from_chunks, copy_text
from ingest.writer.digests import key_digest, md5
from ingest.writer.known import KnownIds
from ingest.writer.rows import ResultRow
from ingest.writer.spools import Spool
from ingest.writer.suites import LABEL_BITS, LABEL_MASK, Placement, written_id
from parity.models import FileSeconds, Outcome, Reason, Result, Run, TestCase, Upload
from parity.models.cleanup import results_delete
from parity.models.sql import model_sql
from parity.pure.memo import Remembered
from parity.storage.partitions import partition_ensure_for_run

# Cases resolved per round of queries: a few statements per this many cases, and this many rows
# in memory.
BATCH_CASES = 20_000
# Lines per piece sent to a COPY; after each, the parser reads as many rows of the next batch.
_CHUNK_LINES = 2_000


@dataclass(frozen=True)
class WriteSummary:
    counts: dict[str, int]
    new_reason_ids: list[int]
    seen_reason_ids: list[int]
    test_ids_drawn: int = 0  # ids taken from the tests' sequence: the new tests, no more


def results_write(*, upload: Upload, rows: Iterable[ResultRow]) -> WriteSummary:
    """Store one upload's results. Must run inside a transaction (the caller's)."""
    run = upload.run
    partition_ensure_for_run(run_id=run.pk)
    # Django's error wrapper: errors of the raw psycopg2 cursor become django.db errors, which
    # the ingest task retries (a dropped connection must not read as bad content).
    with (
        _fewer_collections(),
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


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Python's cyclic collector runs a pass every 700 new container objects, and an upload
    makes several per case (rows, tuples, strings in lists) that never form cycles: a pass per
    50,000 instead, over what the upload made (the objects alive before are frozen out of its
    scans), leaves memory as it was and takes a share of the ingest's time off (bench/matrix.md)."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def results_delete_for_run(*, run: Run) -> int:
    return results_delete(run_id=run.pk)


def outcome_counts(by_outcome: dict[int, int]) -> dict[str, int]:
    counts = {label: by_outcome.get(value, 0) for value, label in Outcome.choices}
    return {"total": sum(counts.values()), **counts}


class NewTests(enum.Enum):
    """When an upload's new tests go into their table."""

    AT_END = "at the end"  # waiting in a spool; another upload may add some of them meanwhile
    PER_BATCH = "per batch"  # with their batch: this upload holds the tests lock until it commits


class UploadWriter:
    def __init__(self, cursor, *, project_id: int, run_id: int, upload_id: int, seen) -> None:
        self.cursor = cursor
        self.params = {"project": project_id, "run": run_id, "upload": upload_id, "seen": seen}
        self.known = KnownIds(cursor, project_id=project_id)
        self.placement = Placement(self.known.tests)
        self.new_tests = NewTests.AT_END
        self.tests_locked = False
        self.tests_waiting = Spool()  # COPY lines of the new tests, when they wait for the end
        self.test_ids_new: list[range | list[int]] = []  # as each batch reserved them
        self.moves: list[tuple[int, int]] = []  # split keys: (plain test, first suite's test)
        self.new_reasons: list[tuple[int, str, str, str]] = []  # id, kind, text, fingerprint
        self.by_outcome = [0] * (max(Outcome.values) + 1)
        self.seen_reason_ids: set[int] = set()
        self.file_seconds: dict[str, float] = {}  # each file's durations summed (FileSeconds)
        self.repeated: set[int] = set()  # tests written more than once
        self.line_start = f"{run_id}\t{upload_id}\t"
        # Durations repeat (pytest and JUnit write milliseconds): each one's COPY text is made
        # once.
        self.duration_texts = Remembered(_duration_text, keep=10_000)

    # --- the batches --------------------------------------------------------------------------

    def write(self, rows: Iterator[ResultRow]) -> None:
        batch = list(islice(rows, BATCH_CASES))
        while batch:
            digests = [md5(row.key.encode()).digest() for row in batch]
            # Only a batch looked up wholly under the tests lock may add its tests at once: the
            # lock can be taken half-way through a batch, and the new tests found before it may
            # have been added by another upload since (the insert at the end handles those).
            locked_before = self.new_tests is NewTests.PER_BATCH
            new_tests = self._resolve(batch, digests, more_to_come=len(batch) == BATCH_CASES)
            ahead: list[ResultRow] = []
            if new_tests:
                self._tests_write(new_tests, now=locked_before, rows=rows, ahead=ahead)
            chunks = self._parsing_meanwhile(self._result_chunks(batch, digests), rows, ahead)
            copy_from_chunks(self.cursor, _COPY_RESULTS, chunks)
            ahead.extend(islice(rows, BATCH_CASES - len(ahead)))
            batch = ahead

    def _tests_write(
        self, lines: list[str], *, now: bool, rows: Iterator[ResultRow], ahead: list[ResultRow]
    ) -> None:
        """A batch's new tests: COPied ``now``, while the parser reads on, or kept in the spool
        for the end. ``lines`` is emptied: a batch's lines are not held through the next
        batch, when a million-test upload is at its largest."""
        data, count = "".join(lines).encode(), len(lines)
        lines.clear()
        if now:
            copy_from_chunks(
                self.cursor, _TESTS_COPY, self._parsing_meanwhile(iter([data]), rows, ahead)
            )
        else:
            self.tests_waiting.write(data, count)

    def _resolve(
        self, cases: list[ResultRow], digests: list[bytes], *, more_to_come: bool
    ) -> list[str]:
        """Look up or reserve every id the batch needs, and place each case as its test (the
        cases of split keys become their suite's, in ``cases`` and ``digests``). Returns the
        COPY lines of its new tests."""
        new_tests = self._tests_resolve(cases, digests, more_to_come)
        reruns, in_own_suite = self._place(cases, digests)
        if in_own_suite:
            new_tests += self._place_in_suites(cases, digests, in_own_suite, reruns)
        tests = self.known.tests
        self.repeated.update(written_id(tests[digests[index]]) for index in reruns)
        self._reasons_resolve(cases)
        return new_tests

    def _place(self, cases: list[ResultRow], digests: list[bytes]):
        """Mark each case's test written under its suite label (``suites``); the indexes of the
        reruns, and of the cases whose key is split by suite (replaced by their suite's test,
        which ``_place_in_suites`` then looks up and places). Runs once per case of the upload,
        so what it touches is a local name."""
        tests, number = self.known.tests, self.placement.number
        elsewhere, bits, mask = self.placement.elsewhere, LABEL_BITS, LABEL_MASK
        reruns: list[int] = []
        in_own_suite: list[tuple[int, int]] = []  # (index, label)
        suite = document = label = None
        for index, row in enumerate(cases):
            if row.suite is not suite or row.document != document:  # a suite's cases come together
                suite, document = row.suite, row.document
                label = number(document, suite)
            digest = digests[index]
            value = tests[digest]
            if value >= 0:  # the test's first case: suites.written(value, label), inlined
                tests[digest] = -(value << bits | label)
            elif -value & mask == label:  # a rerun under the same label
                reruns.append(index)
            else:  # under another label, or split by suite
                qualified = elsewhere(row, digest, label)
                if qualified is None:
                    reruns.append(index)
                else:
                    cases[index], digests[index] = qualified, key_digest(qualified.key)
                    in_own_suite.append((index, label))
        return reruns, in_own_suite

    def _place_in_suites(
        self,
        cases: list[ResultRow],
        digests: list[bytes],
        in_own_suite: list[tuple[int, int]],
        reruns: list[int],
    ) -> list[str]:
        """Look up the suite tests of the batch's split keys, then place them: first those the
        plain tests' results move to, then the cases, in order."""
        splits = self.placement.splits_take()
        indexes = [index for index, _ in in_own_suite]
        new_tests = self._tests_resolve(
            [*(split.first for split in splits), *(cases[index] for index in indexes)],
            [*(split.first_digest for split in splits), *(digests[index] for index in indexes)],
            more_to_come=True,
        )
        tests = self.known.tests
        for split in splits:
            self.placement.place(split.first_digest, split.label)
            first_id = written_id(tests[split.first_digest])
            self.moves.append((split.plain_id, first_id))
            self.repeated.add(first_id)  # the moved results ran before its later ones
        for index, label in in_own_suite:
            if self.placement.place(digests[index], label):
                reruns.append(index)
        return new_tests

    def _tests_resolve(
        self, cases: list[ResultRow], digests: list[bytes], more_to_come: bool
    ) -> list[str]:
        """Give every case's test an id, looked up or reserved; the COPY lines of the new."""
        known = self.known
        new = self._tests_look_up(cases, digests, more_to_come)
        mostly_new = 2 * len(new) >= len(cases)
        if mostly_new and self.new_tests is NewTests.AT_END and self._tests_lock_try():
            # Others may have added tests to the files read before the lock: read them again.
            self.new_tests = NewTests.PER_BATCH
            known.files.clear()
            new = self._tests_look_up(cases, digests, more_to_come)
        ids = known.reserve(TestCase, len(new))
        if ids:
            self.test_ids_new.append(ids)
        project, lines = self.params["project"], []
        for test_id, (digest, row) in zip(ids, new.items(), strict=True):
            known.tests[digest] = test_id
            lines.append(
                f"{test_id}\t{project}\t{copy_text(row.key)}\t{copy_text(row.file)}\t"
                f"{copy_text(row.class_name)}\t{copy_text(row.name)}\n"
            )
        return lines

    def _tests_look_up(
        self, cases: list[ResultRow], digests: list[bytes], more_to_come: bool
    ) -> dict[bytes, ResultRow]:
        """The cases' tests not known yet, once the files not read yet are looked up."""
        tests, files = self.known.tests, self.known.files
        unknown: list[tuple[bytes, ResultRow]] = []
        wanted: dict[str, set[bytes]] = {}
        for digest, row in zip(digests, cases, strict=True):
            if digest not in tests:
                unknown.append((digest, row))
                if row.file not in files:
                    wanted.setdefault(row.file, set()).add(digest)
        if wanted:
            self.known.tests_load(wanted, more_to_come=more_to_come)
        new: dict[bytes, ResultRow] = {}
        for digest, row in unknown:
            if digest not in tests:
                new.setdefault(digest, row)
        return new

    def _tests_lock_try(self) -> bool:
        """Take the project's tests lock if it is free (held until this upload commits)."""
        self.cursor.execute(_TESTS_LOCK_TRY, self.params)
        self.tests_locked = self.cursor.fetchone()[0]
        return self.tests_locked

    def _reasons_resolve(self, cases: list[ResultRow]) -> None:
        reasons = self.known.reasons
        wanted = {
            (row.reason_kind, row.reason_fp): row.reason_text
            for row in cases
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

    def _result_chunks(self, cases: list[ResultRow], digests: list[bytes]) -> Iterator[bytes]:
        """The batch's results as COPY lines. Runs once per case, so what it touches is local."""
        tests, reasons, bits = self.known.tests, self.known.reasons, LABEL_BITS
        seen_reasons, by_outcome = self.seen_reason_ids, self.by_outcome
        durations, start = self.duration_texts, self.line_start
        file_seconds = self.file_seconds
        lines: list[str] = []
        for row, digest in zip(cases, digests, strict=True):
            outcome, duration, message = row.outcome, row.duration, row.message
            if duration is not None:
                file_seconds[row.file] = file_seconds.get(row.file, 0.0) + duration
            if row.reason_fp is None:
                reason_id = NULL
            else:
                reason_id = reasons[row.reason_kind, row.reason_fp]
                seen_reasons.add(reason_id)
            by_outcome[outcome] += 1
            lines.append(
                f"{start}{-tests[digest] >> bits}\t{outcome}\t{durations[duration]}\t"
                f"{copy_text(message) if message else ''}\t{reason_id}\n"
            )
            if len(lines) == _CHUNK_LINES:
                yield "".join(lines).encode()
                lines.clear()
        yield "".join(lines).encode()

    @staticmethod
    def _parsing_meanwhile(
        chunks: Iterator[bytes], rows: Iterator[ResultRow], ahead: list[ResultRow]
    ) -> Iterator[bytes]:
        """``chunks``, and after each one up to ``_CHUNK_LINES`` rows of the next batch read into
        ``ahead``: Python parses while Postgres stores what it was sent."""
        for chunk in chunks:
            yield chunk
            if len(ahead) < BATCH_CASES:
                ahead.extend(islice(rows, min(_CHUNK_LINES, BATCH_CASES - len(ahead))))

    # --- after the COPY -----------------------------------------------------------------------

    def finish(self) -> WriteSummary:
        if self.moves:
            plain, moved = (list(ids) for ids in zip(*self.moves, strict=True))
            self.cursor.execute(_RESULTS_MOVE, {**self.params, "plain": plain, "moved": moved})
        if self.repeated:
            self._reruns_collapse()
        if self.tests_waiting.count:
            self._tests_insert()
        if self.moves:
            self._new_plain_tests_delete()
        new_reason_ids = self._reasons_insert() if self.new_reasons else []
        if self.file_seconds:
            files, seconds = zip(*self.file_seconds.items(), strict=True)
            self.cursor.execute(
                _FILE_SECONDS_INSERT,
                {**self.params, "files": list(files), "seconds": list(seconds)},
            )
        return WriteSummary(
            counts=outcome_counts(dict(enumerate(self.by_outcome))),
            new_reason_ids=new_reason_ids,
            seen_reason_ids=sorted(self.seen_reason_ids),
            test_ids_drawn=sum(len(ids) for ids in self.test_ids_new),
        )

    def close(self) -> None:
        self.tests_waiting.close()
        self.known.close()

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

    def _tests_insert(self) -> None:
        """The waiting new tests, in one COPY, or by ``INSERT … ON CONFLICT`` when another upload
        added one of them since this one looked it up (then this upload's results of it move to
        that row). Under the tests lock no other upload holds uncommitted tests of the project,
        so neither waits on one."""
        if not self.tests_locked:
            self.cursor.execute(_TESTS_LOCK, self.params)
            self.tests_locked = True
        self.cursor.execute("SAVEPOINT ingest_tests")
        try:
            self.tests_waiting.copy_to(self.cursor, _TESTS_COPY)
        except UniqueViolation:
            self.cursor.execute("ROLLBACK TO SAVEPOINT ingest_tests")
        else:
            self.cursor.execute("RELEASE SAVEPOINT ingest_tests")
            return
        self.cursor.execute(_NEW_TESTS_DDL)
        self.tests_waiting.copy_to(self.cursor, "COPY ingest_new_tests FROM STDIN")
        self.cursor.execute(_TESTS_INSERT, self.params)
        self.cursor.execute(_RESULTS_TO_EXISTING_TESTS, self.params)

    def _new_plain_tests_delete(self) -> None:
        """The plain tests of keys split by suite that were new in this upload have no result
        left: they were never tests of their own."""
        new_plain = [
            plain for plain, _ in self.moves if any(plain in ids for ids in self.test_ids_new)
        ]
        if new_plain:
            self.cursor.execute(_NEW_PLAIN_TESTS_DELETE, {**self.params, "ids": new_plain})

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


_COPY_RESULTS = model_sql(
    "COPY {result} (run_id, upload_id, test_id, outcome, duration, message, reason_id) FROM STDIN",
    result=Result,
)

# A test's last result stays, flagged flaky when its runs in the upload disagreed (failed, then
# passed); the earlier ones go, and say what they counted. Rows are found by run and test: the
# results table has no index on id, and naming the run reads only its day's partition.
_RERUNS_COLLAPSE = model_sql(
    """
    WITH ranked AS (
        SELECT id, test_id,
               row_number() OVER (PARTITION BY test_id ORDER BY id DESC) AS newer,
               min(outcome) OVER (PARTITION BY test_id)
                   <> max(outcome) OVER (PARTITION BY test_id) AS flaky
        FROM {result}
        WHERE run_id = %(run)s AND test_id = ANY(%(tests)s) AND upload_id = %(upload)s
    ), flagged AS (
        UPDATE {result} r SET flaky = true FROM ranked
        WHERE r.run_id = %(run)s AND r.test_id = ranked.test_id AND r.id = ranked.id
          AND ranked.newer = 1 AND ranked.flaky
    )
    DELETE FROM {result} r USING ranked
    WHERE r.run_id = %(run)s AND r.test_id = ranked.test_id AND r.id = ranked.id
      AND ranked.newer > 1
    RETURNING r.outcome, r.reason_id
    """,
    result=Result,
)

# Reruns count: the time a file took includes them.
_FILE_SECONDS_INSERT = model_sql(
    """
    INSERT INTO {seconds} (run_id, upload_id, file, seconds)
    SELECT %(run)s, %(upload)s, file, seconds
    FROM unnest(%(files)s::text[], %(seconds)s::float8[]) AS f(file, seconds)
    """,
    seconds=FileSeconds,
)

_REASONS_STILL_NAMED = model_sql(
    "SELECT DISTINCT reason_id FROM {result} "
    "WHERE run_id = %(run)s AND upload_id = %(upload)s AND reason_id = ANY(%(ids)s)",
    result=Result,
)

_RESULTS_MOVE = model_sql(
    """
    UPDATE {result} r SET test_id = moves.moved
    FROM unnest(%(plain)s::bigint[], %(moved)s::bigint[]) AS moves(plain, moved)
    WHERE r.run_id = %(run)s AND r.upload_id = %(upload)s AND r.test_id = moves.plain
    """,
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

# One upload of a project adds tests at a time, from its first batch of them or its insert at
# the end until it commits: concurrent shards adding the same tests wait for each other instead
# of deadlocking, and none meets another's uncommitted tests. Shards whose tests are known never
# take it.
_TESTS_LOCK = "SELECT pg_advisory_xact_lock(hashtext('parity.tests_insert'), %(project)s::int)"
_TESTS_LOCK_TRY = (
    "SELECT pg_try_advisory_xact_lock(hashtext('parity.tests_insert'), %(project)s::int)"
)

# created_at: its db default
_TESTS_COLUMNS = sql.SQL("(id, project_id, key, file, class_name, name)")

_TESTS_COPY = model_sql("COPY {test} {columns} FROM STDIN", test=TestCase, columns=_TESTS_COLUMNS)

_TESTS_INSERT = model_sql(
    """
    INSERT INTO {test} {columns}
    SELECT id, project_id, key, file, class_name, name FROM ingest_new_tests
    ORDER BY file, md5(key)
    ON CONFLICT (project_id, file, key_digest) DO NOTHING
    """,
    test=TestCase,
    columns=_TESTS_COLUMNS,
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

_NEW_PLAIN_TESTS_DELETE = model_sql(
    "DELETE FROM {test} WHERE project_id = %(project)s AND id = ANY(%(ids)s::bigint[])",
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
