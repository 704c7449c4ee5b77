"""The backend x backend matrix: for every pair of backends, not only against the reference,
how far their test files and their tests overlap (Jaccard: shared / either) and how many tests
pass on one and not on the other; and, for one pair, the lists behind those numbers. All read
from the roll-ups of the current runs: ``FileCell`` (a file is on a backend when its current run
has a result in it) and ``CurrentOutcome`` (a test is on a backend when its current run has it).

The matrix reads each backend's sets once, grouped in Postgres by which backends have a test and
which pass it (at most 3^n groups for n backends), so its cost does not grow with the number of
pairs; a pair's lists read only the two backends' rows."""

from collections import Counter
from dataclasses import dataclass, field
from itertools import permutations

from django.db import connection

from parity.models import Backend, CurrentOutcome, FileCell, Outcome, Project, Reason, TestCase
from parity.models.sql import model_sql
from parity.pure.normalize import display_id
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


# Each test's backends as bits (bit i: the project's i-th backend in ``%(backends)s``): summing
# small integers per test is cheaper than grouping by sorted arrays, over a row per test and
# backend (bench/pages_bench.py --big). A bigint holds 63 backends; a project
# with more is grouped by the arrays.
_TEST_GROUPS = model_sql(
    """
    SELECT present, passing, count(*) FROM (
        SELECT bit_or(1::bigint << (array_position(%(backends)s, backend_id) - 1)) AS present,
               bit_or(1::bigint << (array_position(%(backends)s, backend_id) - 1))
                   FILTER (WHERE outcome = %(passed)s) AS passing
        FROM {current} WHERE project_id = %(project)s
        GROUP BY test_id
    ) per_test
    GROUP BY present, passing
    """,
    current=CurrentOutcome,
)
_TEST_GROUPS_ARRAYS = model_sql(
    """
    SELECT present, passing, count(*) FROM (
        SELECT array_agg(backend_id ORDER BY backend_id) AS present,
               array_agg(backend_id ORDER BY backend_id) FILTER (WHERE outcome = %(passed)s)
                   AS passing
        FROM {current} WHERE project_id = %(project)s
        GROUP BY test_id
    ) per_test
    GROUP BY present, passing
    """,
    current=CurrentOutcome,
)
BIT_BACKENDS = 63
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
    tests: Counter = Counter()  # (backends having the test, backends passing it) -> tests
    params = {"project": project.pk, "passed": Outcome.PASSED, "backends": ids}
    bits = len(ids) <= BIT_BACKENDS
    with connection.cursor() as cursor:
        cursor.execute(_TEST_GROUPS if bits else _TEST_GROUPS_ARRAYS, params)
        for present, passing, n in cursor.fetchall():
            if bits:
                present, passing = _backends_of(present, ids), _backends_of(passing or 0, ids)
            else:
                present, passing = frozenset(present), frozenset(passing or ())
            tests[_grouped(present, passing, columns)] += n
    # A family's row that never ran is no column, nor a family whose variants never ran.
    shown = [
        pk
        for pk in ids
        if columns[pk] == pk and (pk not in families or _has_any(pk, file_groups, tests))
    ]
    totals = [
        BackendTotals(
            backend=names[pk],
            files=sum(n for present, n in file_groups.items() if pk in present),
            tests=sum(n for (present, _), n in tests.items() if pk in present),
            passing=sum(n for (_, passing), n in tests.items() if pk in passing),
        )
        for pk in shown
    ]
    grouped = by == BY_FAMILY and bool(families)
    cells = {
        (a, b): _cell(
            names, a, b, file_groups, tests, family=grouped and bool({a, b} & families.keys())
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


def _has_any(pk: int, files: Counter, tests: Counter) -> bool:
    return any(pk in present for present in files) or any(pk in p for p, _ in tests)


def _grouped(
    present: frozenset[int], passing: frozenset[int], columns: dict[int, int]
) -> tuple[frozenset[int], frozenset[int]]:
    """A test's backends as columns: a column has it when a member has it, and passes it when
    every member that has it passes it."""
    having = frozenset(columns[pk] for pk in present)
    failing = frozenset(columns[pk] for pk in present - passing)
    return having, having - failing


def _backends_of(bits: int, ids: list[int]) -> frozenset[int]:
    return frozenset(pk for i, pk in enumerate(ids) if bits >> i & 1)


def _file_groups(project: Project) -> Counter:
    """How many files each set of backends has, exactly. One query."""
    present = FileCell.objects.filter(project=project).exclude(
        passed=0, failed=0, error=0, skipped=0
    )
    by_file: dict[str, set[int]] = {}
    for file, backend_id in present.values_list("file", "backend_id"):
        by_file.setdefault(file, set()).add(backend_id)
    return Counter(frozenset(backends) for backends in by_file.values())


def _cell(
    names: dict[int, str], a: int, b: int, files: Counter, tests: Counter, family: bool = False
) -> PairCell:
    return PairCell(
        family=family,
        a=names[a],
        b=names[b],
        files=_overlap(a, b, ((present, n) for present, n in files.items())),
        tests=_overlap(a, b, ((present, n) for (present, _), n in tests.items())),
        passes_a_not_b=sum(
            n for (_, passing), n in tests.items() if a in passing and b not in passing
        ),
    )


def _overlap(a: int, b: int, groups) -> Overlap:
    size_a = size_b = both = 0
    for present, n in groups:
        size_a += n if a in present else 0
        size_b += n if b in present else 0
        both += n if a in present and b in present else 0
    return Overlap(a=size_a, b=size_b, both=both)


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
# backend lacks half the files), then per backend its first ``limit`` by key (NULL: all) with
# how many there are in all: the first 200 are a bounded heap sort, and only those rows come
# back. (Sorting every candidate spilled to disk, and Python counted them: the pair page's
# cost followed the candidates, not the page; bench/pages_bench.py --big.)
_PASSING_ON_ONE = model_sql(
    """
    WITH cand AS MATERIALIZED (
        SELECT one.backend_id, one.test_id, other.outcome, other.reason_id
        FROM {current} one
        LEFT JOIN {current} other
               ON other.test_id = one.test_id AND other.backend_id IN (%(a)s, %(b)s)
              AND other.backend_id <> one.backend_id
        WHERE one.project_id = %(project)s AND one.backend_id IN (%(a)s, %(b)s)
          AND one.outcome = %(passed)s AND other.outcome IS DISTINCT FROM %(passed)s
    )
    SELECT l.* FROM (VALUES (%(a)s::bigint), (%(b)s::bigint)) AS pair (backend_id)
    CROSS JOIN LATERAL (
        SELECT c.backend_id, t.id, t.file, t.class_name, t.name, c.outcome, reason.text,
               count(*) OVER () AS total
        FROM cand c
        JOIN {test} t ON t.id = c.test_id
        LEFT JOIN {reason} reason ON reason.id = c.reason_id
        WHERE c.backend_id = pair.backend_id
        ORDER BY t.key
        LIMIT %(limit)s
        OFFSET CASE WHEN pair.backend_id = %(a)s THEN %(offset_a)s ELSE %(offset_b)s END
    ) l
    """,
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
    with connection.cursor() as cursor:
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
