"""Which test each case of an upload is: a rerun of one written before, or a test per suite.

The rules, in the order of the upload's cases (``parity.pure.normalize.suites`` says why):

- A key seen again under the same suite label, or in a later XML document under any label, is a
  rerun of the same test: the last occurrence wins (``UploadWriter`` collapses them).
- A key seen again in the same document under another label is *split*: from that case on, each
  of its cases is the test of its own suite (``test_x [suite: chrome]``), and the cases written
  before, under the plain key, become the test of the label the key had until then. The plain
  test gets no result from this upload (and is not created, if it was new here).

What the writer remembers of a test it wrote is in ``KnownIds.tests`` itself: a known test's id
is a positive int there, and once the upload wrote it, ``written(id, label)``, a negative int
holding its id and the number of the label it was last written under. One dict entry per test:
a dict of labels beside the ids would add an entry per test to the worker's peak. The writer's
loop inlines the two common cases (a test's first case, a rerun under the same label); this
module handles the rest.
"""

from typing import NamedTuple

from ingest.writer.digests import key_digest
from ingest.writer.rows import ResultRow
from parity.pure.normalize import TestIdentity, suite_qualified

LABEL_BITS = 24
LABEL_MASK = (1 << LABEL_BITS) - 1
SPLIT = LABEL_MASK  # the label of a split key: each of its cases takes its own suite's key


def written(test_id: int, label: int) -> int:
    """How ``KnownIds.tests`` holds a test this upload wrote, last under ``label``."""
    return -(test_id << LABEL_BITS | label)


def written_id(value: int) -> int:
    return -value >> LABEL_BITS


def written_label(value: int) -> int:
    return -value & LABEL_MASK


class Split(NamedTuple):
    """A key split by suite: its plain test's results in this upload go to the test of the suite
    it was written under before the split (``first``), whose id may not be known yet."""

    plain_id: int
    first: ResultRow
    first_digest: bytes
    label: int


class Placement:
    """The suite labels of one upload, and the keys it split."""

    def __init__(self, tests: dict[bytes, int]) -> None:
        self.tests = tests  # KnownIds.tests
        self.labels: dict[tuple[int, str], int] = {}  # (document, suite label): its number
        self.label_names: list[tuple[int, str]] = []  # by number
        self.splits: list[Split] = []  # since the writer last took them

    def number(self, document: int, suite: str) -> int:
        """The number of a (document, suite label) pair; the writer keeps the current one."""
        number = self.labels.get((document, suite))
        if number is None:
            number = self.labels[document, suite] = len(self.label_names)
            self.label_names.append((document, suite))
        return number

    def elsewhere(self, row: ResultRow, digest: bytes, label: int) -> ResultRow | None:
        """A case whose test was written before under another label, or whose key is split.
        Returns None for a rerun in a later document (the test is now under ``label``), or the
        case as the test of its own suite, placed later by ``place``."""
        value = self.tests[digest]
        last = written_label(value)
        if last != SPLIT:
            if self.label_names[last][0] != row.document:
                self.tests[digest] = written(written_id(value), label)
                return None
            first = in_suite(row, self.label_names[last][1])
            self.splits.append(Split(written_id(value), first, key_digest(first.key), last))
            self.tests[digest] = written(written_id(value), SPLIT)
        return in_suite(row, row.suite)

    def place(self, digest: bytes, label: int) -> bool:
        """Mark a suite's test (its id known by now) written under ``label``; whether it was
        written before in this upload (a rerun). Its key is never split: it names its suite."""
        value = self.tests[digest]
        if value >= 0:
            self.tests[digest] = written(value, label)
            return False
        if written_label(value) != label:  # the same suite in a later document
            self.tests[digest] = written(written_id(value), label)
        return True

    def splits_take(self) -> list[Split]:
        splits, self.splits = self.splits, []
        return splits


def in_suite(row: ResultRow, label: str) -> ResultRow:
    """The row as its test's run in the suite labelled ``label``."""
    identity = suite_qualified(TestIdentity(row.key, row.file, row.class_name, row.name), label)
    return row._replace(key=identity.key, name=identity.name)
