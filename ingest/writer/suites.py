"""A key that a document repeats in another of its suites: a test per suite, split while writing.

The writer keeps each key it wrote in ``KnownIds.tests`` as ``written(id, label)``: the test's
id and the number of its suite label (a (document, label) pair of the upload) in one negative
integer, so an upload without such a repeat pays a shift per case and keeps its keys. A repeat
under another label of the same document is held back with the cases waiting for lookups; when
they are resolved, ``split`` names by its suite every held case of the key, and the results the
plain key already has move to the first suite's test after the COPY. From then on the key is
marked split, and each of its cases waits once and takes its suite's key. A repeat in a later
document (a rerun's report, another shard's) stays a rerun, under the later label.
"""

from typing import NamedTuple

from ingest.normalize import TestIdentity, suite_qualified
from ingest.writer.digests import key_digest
from ingest.writer.known import KnownIds
from ingest.writer.rows import ResultRow
from parity.models import Result
from parity.models.sql import model_sql

LABEL_BITS = 32
LABEL_MASK = (1 << LABEL_BITS) - 1
SPLIT = LABEL_MASK  # the label number of a split key: each of its cases takes its suite's key


def written(test_id: int, label: int) -> int:
    """How ``KnownIds.tests`` holds a test written in this upload (the hot loop inlines it)."""
    return -(test_id << LABEL_BITS | label)


class First(NamedTuple):
    """A key split now: its plain test, and its test in the first suite it was written in."""

    plain_id: int
    digest: bytes
    row: ResultRow
    label: int


class SuiteSplits:
    """The suite labels of one upload's cases, and the keys it split by suite."""

    def __init__(self, known: KnownIds) -> None:
        self.known = known
        self.labels: dict[tuple[int, str], int] = {}  # (document, suite label): its number
        self.label_of: list[tuple[int, str]] = []  # by number
        self.moves: list[tuple[int, int]] = []  # (plain test, its first suite's test)

    def number(self, suite: str, document: int) -> int:
        number = self.labels.setdefault((document, suite), len(self.label_of))
        if number == len(self.label_of):
            self.label_of.append((document, suite))
        return number

    def rerun_elsewhere(self, digest: bytes, value: int, label: int) -> bool:
        """Whether a test written under another suite label (``value``, as ``tests`` holds it)
        is here run again in a later document: a rerun, which goes on under its new label."""
        first = -value & LABEL_MASK
        if first == SPLIT or self.label_of[first][0] == self.label_of[label][0]:
            return False
        self.known.tests[digest] = written(-value >> LABEL_BITS, label)
        return True

    def split(self, held: list[ResultRow]) -> tuple[list[bytes], list[First]]:
        """Split each key that a held case repeats in another suite of its document, then name
        by its suite every held case of a split key (in two passes, so that cases held before
        the split keep their order among its tests). Returns the held cases' digests, and the
        keys split now, whose first suite's tests are resolved with the held cases' tests."""
        tests, firsts = self.known.tests, []
        digests = [key_digest(row.key) for row in held]
        for row, digest in zip(held, digests, strict=True):
            value = tests.get(digest)
            if value is None or value > 0:
                continue  # not written yet
            label, first = self.number(row.suite, row.document), -value & LABEL_MASK
            if first in (label, SPLIT) or self.rerun_elsewhere(digest, value, label):
                continue
            plain_id = -value >> LABEL_BITS
            in_first = in_suite(row, self.label_of[first][1])
            firsts.append(First(plain_id, key_digest(in_first.key), in_first, first))
            tests[digest] = written(plain_id, SPLIT)
        for index, digest in enumerate(digests):
            value = tests.get(digest)
            if value is not None and value < 0 and -value & LABEL_MASK == SPLIT:
                held[index] = in_suite(held[index], held[index].suite)
                digests[index] = key_digest(held[index].key)
        return digests, firsts

    def moves_add(self, firsts: list[First], repeated: set[int]) -> None:
        """The plain tests' results go to their first suite's tests (resolved by now), which
        count as written under that suite and take over the plain tests' reruns."""
        tests = self.known.tests
        for first in firsts:
            value = tests[first.digest]
            if value < 0:  # a test of that name was written already: the results join it
                test_id = -value >> LABEL_BITS
                repeated.add(test_id)
            else:
                test_id = value
                tests[first.digest] = written(test_id, first.label)
            self.moves.append((first.plain_id, test_id))
            if first.plain_id in repeated:
                repeated.discard(first.plain_id)
                repeated.add(test_id)

    def results_move(self, cursor, params: dict) -> None:
        """After the COPY: the plain tests' results to their first suite's tests."""
        plain, moved = (list(ids) for ids in zip(*self.moves, strict=True))
        cursor.execute(_RESULTS_MOVE, {**params, "plain": plain, "moved": moved})

    def new_plain_tests_drop(self, cursor) -> int:
        """Drop the split plain tests that were new in this upload from the new tests to insert
        (``ingest_new_tests``): they have no result left. Returns how many."""
        cursor.execute(_NEW_TESTS_DROP, {"plain": [plain for plain, _ in self.moves]})
        return cursor.rowcount


def in_suite(row: ResultRow, label: str) -> ResultRow:
    """The row as its test's run in the suite labelled ``label``."""
    identity = suite_qualified(TestIdentity(row.key, row.file, row.class_name, row.name), label)
    return row._replace(key=identity.key, name=identity.name)


_RESULTS_MOVE = model_sql(
    """
    UPDATE {result} r SET test_id = moves.moved
    FROM unnest(%(plain)s::bigint[], %(moved)s::bigint[]) AS moves(plain, moved)
    WHERE r.run_id = %(run)s AND r.upload_id = %(upload)s AND r.test_id = moves.plain
    """,
    result=Result,
)

_NEW_TESTS_DROP = "DELETE FROM ingest_new_tests WHERE id = ANY(%(plain)s::bigint[])"
