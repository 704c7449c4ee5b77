"""Backend families, as the pages show them. A family is a backend whose variants are backends
(``Backend.family``: rocm -> rocm-gfx942, rocm-gfx90a, rocm-navi31); each variant is compared
with the reference as any backend is, and the family rolls its variants up: their scores' range,
and per test how many of them fail it ("fails on 2 of 3 arches"). A backend with no variants is
a family of one; the family's own row may have no run at all.

A variant *fails* a test when it has an open gap on it that its score counts (``scored_gaps``,
``parity.definitions.Standing.scored``): a gap of the backend's own (not a ``reference_missing``
row, not declared not applicable, not a test infrastructure lost), and not intended unless the
project's score counts intended gaps.

| read                      | what for                                        | queries     |
|---------------------------|-------------------------------------------------|-------------|
| ``families_of``           | which backends make which family                | 1           |
| ``families_failing``      | the overview's "n tests fail on every arch"     | 1, any projects |
| ``family_tests``          | one family's tests by how many variants fail    | 2           |
| ``gaps_also_failing_attach`` | a page of gaps: where else each test fails | 1, 2 with variants |
| ``failing_on``            | the same for a whole list (the gaps CSV)        | 1, 2 with variants |
"""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db.models import Count, Q, QuerySet

from parity.definitions import counted_q, counted_sql, gap_standing
from parity.models import Backend, BackendState, Gap, Project, TestCase
from parity.models.sql import model_sql
from parity.pure.normalize import display_id
from parity.pure.scores import Scores
from parity.read_replica import read_cursor

# ?by= of the heatmap and the matrix: one column per variant (the default) or per family.
BY_VARIANT, BY_FAMILY = "variant", "family"
GROUPINGS = (BY_VARIANT, BY_FAMILY)


@dataclass(frozen=True)
class Families:
    """A project's backends grouped by family: ``variants`` names only families that have some,
    so a project of flat backends has none."""

    family_of: dict[str, str]  # backend name -> its family's (itself when flat or a family)
    variants: dict[str, list[str]]  # family name -> its variants' names, by name

    @property
    def any(self) -> bool:
        return bool(self.variants)

    def members(self, name: str) -> list[str]:
        """The backends a family's column stands for: its variants, or itself alone."""
        return self.variants.get(name, [name])

    def kin_first(self, backend: str, others: Iterable[str]) -> list[str]:
        """``others`` with ``backend``'s own family first (its variants, the family's row),
        then the rest; by name within each."""
        family = self.family_of.get(backend, backend)
        return sorted(
            set(others) - {backend}, key=lambda n: (self.family_of.get(n, n) != family, n)
        )


def families_from(backends: Iterable[Backend]) -> Families:
    """``Families`` of backends already read (their ``pk``, ``name`` and ``family_id``)."""
    backends = list(backends)
    names = {b.pk: b.name for b in backends}
    return families_named((b.name, names.get(b.family_id, "")) for b in backends)


def families_named(pairs: Iterable[tuple[str, str]]) -> Families:
    """``Families`` of (backend name, its family's name or "") pairs: a page's backends
    (``fragments.BackendParity.family``)."""
    family_of: dict[str, str] = {}
    variants: dict[str, list[str]] = defaultdict(list)
    for name, family in pairs:
        family_of[name] = family or name
        if family:
            variants[family].append(name)
    return Families(family_of, {f: sorted(v) for f, v in sorted(variants.items())})


def families_of(*, project: Project) -> Families:
    """One query."""
    return families_from(Backend.objects.filter(project=project).only("pk", "name", "family_id"))


def scored_gaps(gaps: QuerySet[Gap], *, counts_intended: bool) -> QuerySet[Gap]:
    """The open gaps a backend's score counts against it."""
    gaps = gaps.filter(counted_q(), is_open=True)
    return gaps if counts_intended else gaps.filter(intended=False)


def gap_scored(gap: Gap, counts_intended: bool) -> bool:
    """``scored_gaps`` of one gap already read."""
    return gap.is_open and gap_standing(gap).scored(counts_intended)


# --- The overview's roll-up line -----------------------------------------------------------------


@dataclass(frozen=True)
class FamilyFailing:
    """Of the tests some variant with a current run fails, how many every such variant fails."""

    compared: int  # variants with a current run
    everywhere: int
    somewhere: int


# Per family: its variants with a current run, and the tests they fail, grouped in Postgres by
# how many of those variants fail each (a row per family comes back, not a row per test).
_FAILING = model_sql(
    """
    WITH compared AS (
        SELECT b.family_id, b.id, b.project_id FROM {backend} b
        JOIN {state} s ON s.backend_id = b.id AND s.current_run_id IS NOT NULL
        WHERE b.family_id = ANY(%(families)s)
    ), per_test AS (
        SELECT c.family_id, g.test_id, count(*) AS n
        FROM compared c
        JOIN {gap} g ON g.project_id = c.project_id AND g.backend_id = c.id AND g.is_open
        JOIN {project} p ON p.id = c.project_id
        WHERE g.is_open AND {counted} AND (p.score_counts_intended OR NOT g.intended)
        GROUP BY c.family_id, g.test_id
    )
    SELECT v.family_id, v.n,
           (SELECT count(*) FROM per_test t WHERE t.family_id = v.family_id AND t.n = v.n),
           (SELECT count(*) FROM per_test t WHERE t.family_id = v.family_id)
    FROM (SELECT family_id, count(*) AS n FROM compared GROUP BY family_id) v
    """,
    backend=Backend,
    state=BackendState,
    gap=Gap,
    project=Project,
    counted=counted_sql("g."),
)


def families_failing(*, family_ids: list[int]) -> dict[int, FamilyFailing]:
    """Per family (pk), of any projects: its variants with a current run and the tests every
    one of them, and any one, fails. One query; a family without a compared variant is left
    out."""
    if not family_ids:
        return {}
    params = {"families": family_ids}
    with read_cursor() as cursor:
        cursor.execute(_FAILING, params)
        return {pk: FamilyFailing(n, every, some) for pk, n, every, some in cursor.fetchall()}


@dataclass(frozen=True)
class FamilyRollup:
    """A family on the overview: its variants' headline scores and the tests they fail."""

    family: str
    variants: list[str]
    scores: list[Scores | None]  # per variant, None without a current score
    failing: FamilyFailing | None = None

    @property
    def compared(self) -> int:
        return self.failing.compared if self.failing else 0

    @property
    def headlines(self) -> list[float]:
        return [s.headline for s in self.scores if s is not None and s.headline is not None]

    @property
    def low(self) -> float | None:
        return min(self.headlines, default=None)

    @property
    def high(self) -> float | None:
        return max(self.headlines, default=None)


# --- One family's tests: "fails on 2 of 3 arches" ------------------------------------------------


@dataclass(frozen=True)
class FamilyTest:
    __test__ = False  # not a pytest test class

    id: int
    test: str  # as readers paste it
    failing: list[str]  # the variants that fail it, by name
    of: int  # the family's variants with a current run


@dataclass(frozen=True)
class FamilyTests:
    family: str
    variants: list[str]  # with a current run, by name
    # The first ``limit`` by how many variants fail each, ties by age (the oldest test first);
    # listed the most variants first, then by test.
    tests: list[FamilyTest]
    total: int  # tests any variant fails
    everywhere: int  # tests every variant fails
    by_count: dict[int, int] = field(default_factory=dict)  # variants failing -> tests


# The variants' scored gaps grouped per test (from the open-gap index), the first ``limit`` by
# how many variants fail each and then by id (a test's age), and only those joined to their
# names: sorting every failing test by its key joined and sorted the whole family's gaps
# (bench/families_bench.py). Each row carries the counts per number of variants failing.
_FAMILY_TESTS = model_sql(
    """
    WITH per_test AS MATERIALIZED (
        SELECT g.test_id, array_agg(g.backend_id ORDER BY g.backend_id) AS failing
        FROM {gap} g
        WHERE g.project_id = %(project)s AND g.is_open AND g.backend_id = ANY(%(variants)s)
          AND {counted} AND (%(counts_intended)s OR NOT g.intended)
        GROUP BY g.test_id
    ), top AS (
        SELECT test_id, failing FROM per_test
        ORDER BY cardinality(failing) DESC, test_id
        LIMIT %(limit)s
    )
    SELECT t.id, t.file, t.class_name, t.name, top.failing,
           (SELECT json_object_agg(n, tests) FROM (
                SELECT cardinality(failing) AS n, count(*) AS tests FROM per_test GROUP BY 1
           ) alike)
    FROM top JOIN {test} t ON t.id = top.test_id
    ORDER BY cardinality(top.failing) DESC, t.key
    """,
    gap=Gap,
    test=TestCase,
    counted=counted_sql("g."),
)


def family_tests(*, project: Project, family: str, limit: int = 50) -> FamilyTests:
    """The tests ``family``'s variants with a current run fail, the most variants first (the
    first ``limit``, ties by age), and how many tests each number of variants fails. Two
    queries: the variants, the tests (cut in Postgres before their names are read)."""
    variants = dict(
        BackendState.objects.filter(
            project=project, backend__family__name=family, current_run__isnull=False
        ).values_list("backend_id", "backend__name")
    )
    params = {
        "project": project.pk,
        "variants": list(variants),
        "counts_intended": project.score_counts_intended,
        "limit": limit,
    }
    tests, by_count = [], {}
    if variants:
        with read_cursor() as cursor:
            cursor.execute(_FAMILY_TESTS, params)
            for pk, file, class_name, name, failing, alike in cursor.fetchall():
                by_count = {int(n): count for n, count in alike.items()}
                tests.append(
                    FamilyTest(
                        id=pk,
                        test=display_id(file, class_name, name),
                        failing=sorted(variants[b] for b in failing),
                        of=len(variants),
                    )
                )
    return FamilyTests(
        family=family,
        variants=sorted(variants.values()),
        tests=tests,
        total=sum(by_count.values()),
        everywhere=by_count.get(len(variants), 0),
        by_count=by_count,
    )


# --- "Also failing in" -------------------------------------------------------------------------


@dataclass(frozen=True)
class AlsoFailing:
    """Where else a gap's test fails: its family's other variants first, then other backends;
    and, for a variant, how many of its family's variants with a current run fail it."""

    backends: list[str]
    family: str = ""  # the gap's backend's family, when it has variants
    family_failing: int = 0  # of the family's compared variants, those failing (this one too)
    family_compared: int = 0

    @property
    def fails_on(self) -> str:
        """ "2 of 3" for a variant's gap; "" for a flat backend's, and where no variant's
        score counts the test's gap (an intended one alone)."""
        if not (self.family and self.family_failing):
            return ""
        return f"{self.family_failing} of {self.family_compared}"


def also_failing(
    *, backend: str, failing: Iterable[str], families: Families, compared: set[str]
) -> AlsoFailing:
    """``backend``'s gap seen with every backend failing its test (``failing``: ``backend``
    among them when its own gap is scored), in ``families``; ``compared``: the backends with a
    current run. No query."""
    failing = set(failing)
    family = families.family_of.get(backend, backend)
    kin = [v for v in families.variants.get(family, []) if v in compared]
    return AlsoFailing(
        backends=families.kin_first(backend, failing),
        family=family if kin else "",
        family_failing=len(failing & set(kin)),
        family_compared=len(kin),
    )


_BACKENDS_WITH_RUNS = Count("state", filter=Q(state__current_run__isnull=False))


@dataclass(frozen=True)
class FailingOn:
    """Where a list's tests fail (``failing_on``): ``also`` answers for one of its gaps."""

    failing: dict[int, set[str]]  # test id -> the backends failing it
    families: Families
    compared: set[str]  # backends with a current run (read only when variants matter)

    def also(self, *, backend: str, test_id: int) -> AlsoFailing:
        return also_failing(
            backend=backend,
            failing=self.failing.get(test_id, ()),
            families=self.families,
            compared=self.compared,
        )


def failing_on(*, project: Project, tests, variants: bool) -> FailingOn:
    """The backends failing each of ``tests`` (ids, or a subquery of them), and with
    ``variants`` (some gap listed is a variant's) the backends with a current run. One query,
    two with ``variants``."""
    open_gaps = scored_gaps(
        Gap.objects.filter(project=project, test_id__in=tests),
        counts_intended=project.score_counts_intended,
    ).values_list("test_id", "backend__name", "backend__family__name")
    failing: dict[int, set[str]] = defaultdict(set)
    pairs = {}
    for test_id, backend, family in open_gaps:
        failing[test_id].add(backend)
        pairs[backend] = family or ""
    compared: set[str] = set()
    if variants:
        backends = (
            Backend.objects.filter(project=project)
            .only("pk", "name", "family_id")
            .annotate(compared=_BACKENDS_WITH_RUNS)
        )
        named = {b.pk: b for b in backends}
        compared = {b.name for b in named.values() if b.compared}
        pairs.update(
            (b.name, named[b.family_id].name if b.family_id else "") for b in named.values()
        )
    return FailingOn(failing=failing, families=families_named(pairs.items()), compared=compared)


def gaps_also_failing_attach(gaps: list[Gap], *, project: Project) -> None:
    """Give each gap (of one project; a page of a list) ``also_failing``, an ``AlsoFailing``.
    One query, the scored open gaps on the gaps' tests (bounded by the page), and one more when
    a gap is a variant's: its family's variants with a current run."""
    if not gaps:
        return
    found = failing_on(
        project=project,
        tests={g.test_id for g in gaps},
        variants=any(g.backend.family_id for g in gaps),
    )
    for gap in gaps:
        gap.also_failing = found.also(backend=gap.backend.name, test_id=gap.test_id)
