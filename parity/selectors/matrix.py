"""The backend x backend matrix: for every pair of backends, not only against the reference,
how far their test files and their tests overlap (Jaccard: shared / either) and how many tests
pass on one and not on the other; and, for one pair, the lists behind those numbers. All read
from the roll-ups of the current runs: ``FileCell`` (a file is on a backend when its current run
has a result in it) and ``CurrentOutcome`` (a test is on a backend when its current run has it).

The matrix reads each backend's tests as bitmaps (``PresenceBlock``, 64 tests a row), so a pair's
counts are a few integer ANDs; a pair's lists read only the two backends' rows."""

import struct
from collections import Counter
from dataclasses import dataclass, field
from itertools import permutations

from parity.models import (
    Backend,
    CurrentOutcome,
    FileCell,
    Outcome,
    PresenceBlock,
    Project,
    Reason,
    TestCase,
)
from parity.models.sql import model_sql
from parity.pure.normalize import display_id
from parity.read_replica import read_cursor
from parity.selectors.families import BY_FAMILY, BY_VARIANT
from parity.selectors.fragments import backend_names, reference_first


@dataclass(frozen=True)
class Overlap:
    """Two sets, as seen from ``a``: its size, ``b``'s, and what they share."""

    a: int
    b: int
    both: int

    @property
    def only_a(self) -> int:
        return self.a - self.both

    @property
    def only_b(self) -> int:
        return self.b - self.both

    @property
    def jaccard(self) -> float | None:
        """Shared / in either; None when neither has any."""
        either = self.a + self.b - self.both
        return self.both / either if either else None

    @property
    def a_also_on_b(self) -> float | None:
        """The share of ``a``'s that ``b`` has too."""
        return self.both / self.a if self.a else None


@dataclass(frozen=True)
class PairCell:
    """Backend ``a`` (the row) against backend ``b`` (the column)."""

    a: str
    b: str
    files: Overlap
    tests: Overlap
    passes_a_not_b: int  # tests passing on a that do not pass on b (or b lacks)
    family: bool = False  # a or b is a family's column (``?by=family``): no pair page of its own


@dataclass(frozen=True)
class BackendTotals:
    backend: str
    files: int
    tests: int
    passing: int


@dataclass(frozen=True)
class Matrix:
    backends: list[str]  # the reference first
    reference: str | None
    totals: list[BackendTotals]  # in ``backends`` order
    rows: list[list[PairCell | None]]  # rows[i][j]: backends[i] against backends[j]; None: i == j
    by: str = BY_VARIANT  # a row and column per variant, or per family
    # The families shown as one row and column (``?by=family``) -> their variants.
    families: dict[str, list[str]] = field(default_factory=dict)
    has_families: bool = False  # some backend has variants: the page offers ``by``

    @property
    def lines(self) -> list[tuple[BackendTotals, list[PairCell | None]]]:
        """Each row with its backend's totals (a template cannot zip)."""
        return list(zip(self.totals, self.rows, strict=True))

    def pair(self, a: str, b: str) -> PairCell | None:
        return self.rows[self.backends.index(a)][self.backends.index(b)]


# Each backend's tests as 64-bit blocks (``PresenceBlock``): the page ANDs bitsets, and its cost
# follows the tests, not a row per test and backend (grouping ``CurrentOutcome`` by test grew
# with the backends: bench/README.md).
_TEST_BLOCKS = model_sql(
    "SELECT backend_id, block, present, passing FROM {block} WHERE backend_id = ANY(%(backends)s)",
    block=PresenceBlock,
)
_PRESENT = ("passed", "failed", "error", "skipped")  # FileCell counts of tests in the run


def backend_matrix(*, project: Project, by: str = BY_VARIANT) -> Matrix:
    """Every ordered pair of the project's backends. Three queries: backends, files, tests.

    A family's own row that never ran is left out. ``by`` "family": a family is one row and
    column, which has a file or a test when any of its variants has it, and passes a test when
    every variant that has it passes it (so "pass on A, not on rocm" counts the tests some arch
    of rocm does not pass)."""
    names, columns, families = _columns(project, by)
    file_groups = Counter()
    for present, n in _file_groups(project).items():
        file_groups[frozenset(columns[pk] for pk in present)] += n
    ids = list(names)
    having, failing = Counter(), Counter()  # column -> bitset of its tests (see _Sets)
    for pk, (present, passing) in _test_bits(ids).items():
        having[columns[pk]] |= present
        failing[columns[pk]] |= present & ~passing
    # A column passes a test when every member having it passes it.
    test_sets = _Sets.of_tests(having, {pk: bits & ~failing[pk] for pk, bits in having.items()})
    # A family's row that never ran is no column, nor a family whose variants never ran.
    shown = [
        pk
        for pk in ids
        if columns[pk] == pk
        and (pk not in families or test_sets.having[pk] or _has_any(pk, file_groups))
    ]
    file_sets = _Sets(file_groups)
    totals = [
        BackendTotals(
            backend=names[pk],
            files=file_sets.weight(file_sets.having[pk]),
            tests=test_sets.weight(test_sets.having[pk]),
            passing=test_sets.weight(test_sets.passing[pk]),
        )
        for pk in shown
    ]
    grouped = by == BY_FAMILY and bool(families)
    cells = {
        (a, b): _cell(
            names, a, b, file_sets, test_sets, family=grouped and bool({a, b} & families.keys())
        )
        for a, b in permutations(shown, 2)
    }
    return Matrix(
        backends=[names[pk] for pk in shown],
        reference=names.get(project.reference_backend_id),
        totals=totals,
        rows=[[cells.get((a, b)) for b in shown] for a in shown],
        by=BY_FAMILY if grouped else BY_VARIANT,
        families={names[f]: [names[v] for v in vs] for f, vs in families.items()}
        if grouped
        else {},
        has_families=bool(families),
    )


def _columns(project: Project, by: str) -> tuple[dict[int, str], dict[int, int], dict]:
    """The backends (pk -> name, in page order), the column each is counted in (its own, or
    by family its family's), and the families with variants (pk -> its variants' pks)."""
    backends = Backend.objects.filter(project=project).only("pk", "name", "family_id")
    backends = reference_first(project, list(backends))
    names = {b.pk: b.name for b in backends}
    families: dict[int, list[int]] = {}
    for b in backends:
        if b.family_id:
            families.setdefault(b.family_id, []).append(b.pk)
    by_family = by == BY_FAMILY and families
    columns = {b.pk: (b.family_id or b.pk) if by_family else b.pk for b in backends}
    return names, columns, families


def _has_any(pk: int, files: Counter) -> bool:
    return any(pk in present for present in files)


def _test_bits(backends: list[int]) -> dict[int, tuple[int, int]]:
    """Per backend, its current tests and those passing there, as bitsets over the blocks any
    of ``backends`` has (block k of the sorted blocks is bits 64k to 64k+63). One query."""
    with read_cursor() as cursor:
        cursor.execute(_TEST_BLOCKS, {"backends": backends})
        rows = cursor.fetchall()
    at = {block: i for i, block in enumerate(sorted({row[1] for row in rows}))}
    buffers: dict[int, tuple[bytearray, bytearray]] = {}
    for backend, block, present, passing in rows:
        bufs = buffers.setdefault(backend, (bytearray(8 * len(at)), bytearray(8 * len(at))))
        _BLOCK.pack_into(bufs[0], 8 * at[block], present)
        _BLOCK.pack_into(bufs[1], 8 * at[block], passing)
    return {
        backend: (int.from_bytes(present, "little"), int.from_bytes(passing, "little"))
        for backend, (present, passing) in buffers.items()
    }


_BLOCK = struct.Struct("<q")  # a block as Postgres stores it: a signed 64-bit integer


def _file_groups(project: Project) -> Counter:
    """How many files each set of backends has, exactly. One query."""
    present = FileCell.objects.filter(project=project).exclude(
        passed=0, failed=0, error=0, skipped=0
    )
    by_file: dict[str, set[int]] = {}
    for file, backend_id in present.values_list("file", "backend_id"):
        by_file.setdefault(file, set()).add(backend_id)
    return Counter(frozenset(backends) for backends in by_file.values())


class _Sets:
    """Groups of tests (or files) as bitsets, so that a pair's counts are a few integer ANDs
    whatever the number of groups: bit g of ``having[pk]`` is set when group g's tests are on
    backend pk, of ``passing[pk]`` when they pass there. A set's weight (its tests) sums each
    group's count by its binary digits: ``planes[w]`` holds the groups whose count has bit w.
    (Summing the groups per pair cost pairs x groups: 380 x 1,236 at 20 backends.)"""

    def __init__(self, groups: Counter) -> None:
        self.having: dict[int, int] = Counter()
        self.passing: dict[int, int] = Counter()
        counts = list(groups.values())
        for g, key in enumerate(groups):
            present, passing = key if isinstance(key, tuple) else (key, frozenset())
            for pk in present:
                self.having[pk] |= 1 << g
            for pk in passing:
                self.passing[pk] |= 1 << g
        width = max(counts, default=0).bit_length()
        self.planes = [
            sum(1 << g for g, n in enumerate(counts) if n >> w & 1) for w in range(width)
        ]

    @classmethod
    def of_tests(cls, having: dict[int, int], passing: dict[int, int]) -> "_Sets":
        """Bitsets over the tests themselves: each test a group of one."""
        sets = cls(Counter())
        sets.having.update(having)
        sets.passing.update(passing)
        sets.planes = [-1]  # every group weighs one: a set's weight is its bit count
        return sets

    def weight(self, bits: int) -> int:
        return sum((bits & plane).bit_count() << w for w, plane in enumerate(self.planes))

    def overlap(self, a: int, b: int) -> Overlap:
        both = self.weight(self.having[a] & self.having[b])
        return Overlap(a=self.weight(self.having[a]), b=self.weight(self.having[b]), both=both)


def _cell(
    names: dict[int, str], a: int, b: int, files: _Sets, tests: _Sets, family: bool = False
) -> PairCell:
    return PairCell(
        family=family,
        a=names[a],
        b=names[b],
        files=files.overlap(a, b),
        tests=tests.overlap(a, b),
        passes_a_not_b=tests.weight(tests.passing[a] & ~tests.passing[b]),
    )


# --- One pair: the lists behind its numbers ---------------------------------------------------


@dataclass(frozen=True)
class TestGap:
    """A test that passes on one backend of the pair and not on the other."""

    __test__ = False  # not a pytest test class

    id: int
    test: str  # its real ID (unescaped)
    file: str
    there: str | None  # its outcome on the other backend; None: not in its current run
    reason: str | None = None  # why, there: its skip or failure reason


@dataclass(frozen=True)
class PairLists:
    a: str
    b: str
    files_only_a: list[str]  # test files in a's current run and not in b's, by name
    files_only_b: list[str]
    passes_only_a: list[TestGap]  # tests passing on a, not on b, by ID (the first ``limit``)
    passes_only_b: list[TestGap]
    passes_only_a_count: int  # all of them
    passes_only_b_count: int


def backend_pair(
    *, project: Project, a: str, b: str, limit: int | None = None, offsets: tuple[int, int] = (0, 0)
) -> PairLists:
    """Files on one backend of the pair and not the other, and tests passing on one and not the
    other (at most ``limit`` of each, all when None, after the first ``offsets`` of a's list and
    of b's: a page of each). Three queries: backends, files, tests."""
    ids = {name: pk for pk, name in backend_names(project).items()}
    pk_a, pk_b = ids[a], ids[b]
    files: dict[int, set[str]] = {pk_a: set(), pk_b: set()}
    present = (
        FileCell.objects.filter(project=project, backend_id__in=[pk_a, pk_b])
        .exclude(passed=0, failed=0, error=0, skipped=0)
        .values_list("backend_id", "file")
    )
    for backend_id, file in present:
        files[backend_id].add(file)
    passing, counts = _passing_on_one(project, pk_a, pk_b, limit, offsets)
    return PairLists(
        a=a,
        b=b,
        files_only_a=sorted(files[pk_a] - files[pk_b]),
        files_only_b=sorted(files[pk_b] - files[pk_a]),
        passes_only_a=passing[pk_a],
        passes_only_b=passing[pk_b],
        passes_only_a_count=counts[pk_a],
        passes_only_b_count=counts[pk_b],
    )


# Each backend's tests passing there and not on the other (``cand``, tens of thousands when one
# backend lacks half the files), read from the two backends' ``PresenceBlock`` bitmaps (not by
# joining their current outcomes: a hash of both whole runs); then per backend its first
# ``limit`` by key (NULL: all) with how many there are in all: the first 200 are a bounded heap
# sort, and only those rows come back, with the other backend's outcome and reason for each.
# (Sorting every candidate spilled to disk, and Python counted them: the pair page's cost
# followed the candidates, not the page; bench/pages_bench.py --big.)
_PASSING_ON_ONE = model_sql(
    """
    WITH cand AS MATERIALIZED (
        SELECT one.backend_id, (one.block << 6) + bit.n AS test_id
        FROM {block} one
        LEFT JOIN {block} other
               ON other.backend_id = %(a)s + %(b)s - one.backend_id AND other.block = one.block
        CROSS JOIN LATERAL (
            SELECT n FROM generate_series(0, 63) n
            WHERE (one.passing & ~coalesce(other.passing, 0)) >> n & 1 = 1
        ) bit
        WHERE one.backend_id IN (%(a)s, %(b)s) AND one.passing & ~coalesce(other.passing, 0) <> 0
    )
    SELECT l.backend_id, l.id, l.file, l.class_name, l.name, o.outcome, reason.text, l.total
    FROM (VALUES (%(a)s::bigint, %(b)s::bigint), (%(b)s, %(a)s)) AS pair (backend_id, other_id)
    CROSS JOIN LATERAL (
        SELECT c.backend_id, t.id, t.file, t.class_name, t.name, t.key,
               count(*) OVER () AS total
        FROM cand c
        JOIN {test} t ON t.id = c.test_id
        WHERE c.backend_id = pair.backend_id
        ORDER BY t.key
        LIMIT %(limit)s
        OFFSET CASE WHEN pair.backend_id = %(a)s THEN %(offset_a)s ELSE %(offset_b)s END
    ) l
    LEFT JOIN {current} o ON o.backend_id = pair.other_id AND o.test_id = l.id
    LEFT JOIN {reason} reason ON reason.id = o.reason_id
    ORDER BY l.backend_id, l.key
    """,
    block=PresenceBlock,
    current=CurrentOutcome,
    test=TestCase,
    reason=Reason,
)


def _passing_on_one(
    project: Project, a: int, b: int, limit: int | None, offsets: tuple[int, int]
) -> tuple[dict[int, list[TestGap]], Counter]:
    """Per backend of the pair, its ``limit`` tests passing there and not on the other after
    its offset, and how many there are in all (0 past its last)."""
    found: dict[int, list[TestGap]] = {a: [], b: []}
    counts: Counter = Counter({a: 0, b: 0})
    params = {"project": project.pk, "a": a, "b": b, "passed": Outcome.PASSED, "limit": limit}
    params.update(offset_a=offsets[0], offset_b=offsets[1])
    with read_cursor() as cursor:
        cursor.execute(_PASSING_ON_ONE, params)
        for backend_id, pk, file, class_name, name, there, reason, total in cursor:
            counts[backend_id] = total
            found[backend_id].append(
                TestGap(
                    id=pk,
                    test=display_id(file, class_name, name),
                    file=file,
                    there=Outcome(there).label if there is not None else None,
                    reason=reason,
                )
            )
    return found, counts
