"""Which test each case of an upload is: a rerun of one written before, or a test per suite.

The rules, in the order of the upload's cases (``ingest.normalize.suites`` says why):

- A key seen again under the same suite label, or in a later XML document under any label, is a
  rerun of the same test: the last occurrence wins (``UploadWriter`` collapses them).
- A key seen again in the same document under another label is *split*: from that case on, each
  of its cases is the test of its own suite (``test_x [suite: chrome]``), and the cases written
  before, under the plain key, become the test of the label the key had until then. The plain
  test gets no result from this upload (and is not created, if it was new here).

``Placement`` remembers, per key digest, the label its test was last written under: one dict
entry per test of the upload, which also tells reruns apart.
"""

from typing import NamedTuple

from ingest.normalize import TestIdentity, suite_qualified
from ingest.writer.digests import key_digest
from ingest.writer.rows import ResultRow

SPLIT = -1  # the label of a split key: each of its cases takes its own suite's key


class Placed(NamedTuple):
    """A case as the test it belongs to (its row suite-qualified when its key is split)."""

    row: ResultRow
    digest: bytes
    rerun: bool  # its test was written before in this upload


class Split(NamedTuple):
    """A key split by suite: its plain test's results in this upload go to ``first``'s test."""

    plain: bytes  # digest of the plain key
    first: ResultRow  # the key as the test of the suite it was written under before the split
    first_digest: bytes


class Placement:
    def __init__(self) -> None:
        self.label_of: dict[bytes, int] = {}  # digest of each key written: its last label
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

    def splits_take(self) -> list[Split]:
        """The keys split since the last call."""
        splits, self.splits = self.splits, []
        return splits

    def elsewhere(self, row: ResultRow, digest: bytes, label: int, last: int) -> Placed:
        """A case whose key was written before under another label, ``last``, or split. (The
        two common cases, a key not written yet and one written under the same label, are
        inlined in the writer's loop: ``label_of`` gets the label, or it is a rerun.)"""
        if last != SPLIT:
            if self.label_names[last][0] != row.document:  # a rerun in a later document
                self.label_of[digest] = label
                return Placed(row, digest, rerun=True)
            self._split(row, digest, last)
        return self._in_own_suite(row, label)

    def _split(self, row: ResultRow, digest: bytes, last: int) -> None:
        first = in_suite(row, self.label_names[last][1])
        first_digest = key_digest(first.key)
        self.splits.append(Split(digest, first, first_digest))
        self.label_of[digest] = SPLIT
        self.label_of[first_digest] = last

    def _in_own_suite(self, row: ResultRow, label: int) -> Placed:
        qualified = in_suite(row, row.suite)
        digest = key_digest(qualified.key)
        rerun = digest in self.label_of
        self.label_of[digest] = label
        return Placed(qualified, digest, rerun)


def in_suite(row: ResultRow, label: str) -> ResultRow:
    """The row as its test's run in the suite labelled ``label``."""
    identity = suite_qualified(TestIdentity(row.key, row.file, row.class_name, row.name), label)
    return row._replace(key=identity.key, name=identity.name)
