"""One test file: its tests x backends with each test's outcome in the backend's current run
(``CurrentOutcome``), its reason and issues, and its open gap (``Gap``) with the triage."""

from collections import Counter
from dataclasses import dataclass, field

from django.contrib.postgres.expressions import ArraySubquery
from django.core.paginator import Page, Paginator
from django.db.models import Exists, OuterRef, Subquery
from psycopg2 import sql

from parity.definitions import ABSENT, NOT_APPLICABLE, history_kept
from parity.models import (
    CurrentOutcome,
    FileGapCount,
    Gap,
    Outcome,
    PendingTest,
    Project,
    Reason,
    TestCase,
)
from parity.models.sql import model_sql
from parity.pure.normalize import display_id, is_expected_failure
from parity.read_replica import read_cursor
from parity.selectors.fragments import (
    ReasonInfo,
    TestCell,
    backend_names,
    gap_info,
    reason_infos,
    rows_per_page,
)
from parity.selectors.run_files import UnrunFile, unrun_files

# Tests the reference first ran after the backend's current run (shown only when there are).
PENDING_ROW = "not yet run there"
# Tests a backend's run lacks that are declared not to apply there (shown only when there are):
# not "missing", which is a gap (``parity.definitions.standing``).
NOT_APPLICABLE_ROW = "not applicable"
OPTIONAL_ROWS = ("xfail", PENDING_ROW, NOT_APPLICABLE_ROW)
_DECLARED_RAN = "declared_ran"  # a declared test the run has (its outcome says how it went)
# With a backend chosen, its worst outcomes first: what a maintainer came to see.
_OUTCOME_ORDER = {"error": 0, "failed": 1, "skipped": 2, None: 3, "passed": 4}
# The fewest tests a page holds, however many backends share its ``cells_per_page``.
MIN_TESTS_PER_PAGE = 10
SUMMARY_ROWS = (
    "passed", "skipped", "xfail", "failed", "error", "missing", NOT_APPLICABLE_ROW, PENDING_ROW
)  # fmt: skip


@dataclass(frozen=True)
class TestRow:
    __test__ = False

    id: int
    key: str
    name: str  # Class::name, the part of its real ID after the file (unescaped)
    cells: list[TestCell]


@dataclass(frozen=True)
class ReasonCount:
    reason: ReasonInfo | None  # None: the message gave no reason
    outcome: str
    count: int


@dataclass(frozen=True)
class NeverRan:
    """A backend whose current run has none of the file's tests: one fact, not a row per test."""

    backend: str
    tests: int  # the file's tests it lacks that the reference passes
    intended: int  # of those, gaps a triage marks intended (by design)
    # Their standing when all share one: a gap state (missing), how infrastructure lost the file
    # (crashed, not_run...) or not_applicable (declared); else "".
    state: str


@dataclass(frozen=True)
class FileGrid:
    file: str
    backends: list[str]  # the reference first
    reference: str | None
    backend: str | None  # the backend the page opened on
    rows: list[TestRow]  # the page's (``pager``), in its order, a cell per one of ``columns``
    pager: Page  # of the file's tests, sorted: by key, or ``backend``'s worst outcomes first
    # Per outcome (SUMMARY_ROWS; xfail, an expected failure's skip, only when there is one),
    # tests per backend.
    counts: list[tuple[str, list[int]]]
    reasons: list[ReasonCount]  # why tests do not pass on ``backend`` (every backend if None)
    absent: int  # tests passing on the reference that ``backend``'s run (or any) lacks
    # Backends (``backend`` only, if chosen) whose CI was told to run the file and it crashed,
    # timed out, ran no test or never started, each with how many of its tests have that gap.
    unrun: list[tuple[UnrunFile, int]]
    never_ran: list[NeverRan]  # backends (``backend`` only, if chosen) that ran none of its tests
    # Per backend name, of the file's open gaps there, those that read flaky (states from
    # history): the heatmap cell's count (``FileGapCount.flaky``). Only backends with some.
    flaky: dict[str, int] = field(default_factory=dict)

    @property
    def backends_flaky(self) -> list[tuple[str, int]]:
        """Each of ``backends`` with its flaky count (its header's marker)."""
        return [(name, self.flaky.get(name, 0)) for name in self.backends]

    @property
    def columns_flaky(self) -> list[tuple[str, int]]:
        """Each of ``columns`` with its flaky count."""
        return [(name, self.flaky.get(name, 0)) for name in self.columns]

    @property
    def tests(self) -> int:
        return self.pager.paginator.count

    @property
    def folded(self) -> NeverRan | None:
        """The chosen backend ran none of the file's tests: the page says so once."""
        return next((n for n in self.never_ran if n.backend == self.backend), None)

    @property
    def columns(self) -> list[str]:
        """The grid's backends: each but those that ran none of the file's tests, which one
        row each says so for (``never_ran``) instead of a cell per test."""
        folded = {n.backend for n in self.never_ran}
        return [name for name in self.backends if name not in folded]


@dataclass(frozen=True)
class _Read:
    """A file's tests on every backend, counted in the database: what the whole page counts,
    read as a few rows per backend however many tests the file has; only a page's tests are
    read one by one."""

    names: dict[int, str]  # backend pk -> name, the reference first
    # (backend, outcome, reason) -> the tests with that outcome and reason in its current run
    outcomes: dict[tuple[int, str, int | None], int]
    # (backend, state, intended) -> its open gaps; a gap declared not applicable has the state
    # ``not_applicable`` here when the run lacks its test, ``_DECLARED_RAN`` when it ran (no gap
    # of the backend's either way).
    gaps: dict[tuple[int, str, bool], int]
    reasons: dict[int, ReasonInfo]
    pending: set[tuple[int, int]]

    def gaps_absent_declared(self, backend_id: int) -> int:
        """The file's tests ``backend_id``'s run lacks that are declared not applicable there."""
        return sum(
            n
            for (b, found, _), n in self.gaps.items()
            if b == backend_id and found == NOT_APPLICABLE
        )

    def gaps_in(self, state: str, backends: list[str]) -> int:
        """The file's open gaps in ``state`` on ``backends`` (names)."""
        return sum(
            n
            for (backend_id, found, _), n in self.gaps.items()
            if found == state and self.names[backend_id] in backends
        )


_LABELS = {value: label for value, label in Outcome.choices}


def file_grid(
    *,
    project: Project,
    file: str,
    backend: str | None = None,
    page: int | str = 1,
    per_page: int = 100,
    cells_per_page: int | None = None,
) -> FileGrid:
    """Tests of ``file`` that some current run has or some open gap names, page ``page`` of
    them as rows (``per_page`` a page, fewer if that many rows of the grid's columns would be
    more than ``cells_per_page`` cells); the counts, reasons and backends that never ran it of
    every test. Nine queries, whatever the page and the file's size: the backends, the tests
    as values (with where each is pending), outcomes and gaps counted, reasons and their
    issues, then the page's outcomes, its gaps whole (triages and issues) and how the file ran
    (run manifests); a tenth, of its cells' flaky counts, for a project that keeps states from
    history."""
    names = backend_names(project)
    if backend not in names.values():
        backend = None
    in_file = TestCase.objects.filter(project=project, file=file)
    chosen = next((pk for pk, name in names.items() if name == backend), None)
    tests = _tests(in_file, chosen)
    pending = {(t[0], backend_id) for t in tests for backend_id in t[5]}
    read = _file_read(project, [t[0] for t in tests], names, pending)
    if chosen is not None:
        tests.sort(key=lambda t: (_OUTCOME_ORDER[t[4]], t[1]))
    picked = [n for n in names.values() if backend is None or n == backend]
    never_ran = [n for n in _never_ran(read) if n.backend in picked]
    folded = {n.backend for n in never_ran}
    columns = [pk for pk, name in names.items() if name not in folded]
    per_page = rows_per_page(
        per_page, cells_per_page=cells_per_page, columns=len(columns), least=MIN_TESTS_PER_PAGE
    )
    pager = Paginator(tests, per_page).get_page(page)
    shown = [t[0] for t in pager.object_list]
    outcomes = {
        (test_id, backend_id): (_LABELS[outcome], reason_id)
        for test_id, backend_id, outcome, reason_id in CurrentOutcome.objects.filter(
            project=project, test_id__in=shown
        ).values_list("test_id", "backend_id", "outcome", "reason_id")
    }
    gaps = {
        (g.test_id, g.backend_id): g
        for g in Gap.objects.filter(
            project=project, is_open=True, test_id__in=shown
        ).select_related("triage__issue")
    }
    return FileGrid(
        file=file,
        backends=list(names.values()),
        reference=names.get(project.reference_backend_id),
        backend=backend,
        rows=[_row(test, read, outcomes, gaps, columns) for test in pager.object_list],
        pager=pager,
        counts=_counts(read, {t[0] for t in tests}),
        reasons=_reason_counts(read, backend),
        absent=read.gaps_in("missing", picked),
        unrun=[
            (u, read.gaps_in(u.state, [name]))
            for (name, _), u in sorted(unrun_files(project=project, files=[file]).items())
            if name in picked
        ],
        never_ran=never_ran,
        flaky=_flaky(project, file),
    )


def _flaky(project: Project, file: str) -> dict[str, int]:
    """Per backend name, the file's open gaps there that read flaky, as its heatmap cell counts
    them (``FileGapCount.flaky``); no query for a project that keeps no states from history."""
    if not history_kept(project):
        return {}
    return dict(
        FileGapCount.objects.filter(project=project, file=file, flaky__gt=0).values_list(
            "backend__name", "flaky"
        )
    )


def _tests(in_file, chosen: int | None) -> list[tuple]:
    """The file's tests some current run has or some open gap names, by key, each as (pk, key,
    class name, name, its outcome on the ``chosen`` backend, the backends it is pending on).
    Tests neither names (renamed, deleted) are history: left out."""
    found = (
        in_file.filter(
            Exists(CurrentOutcome.objects.filter(test=OuterRef("pk")))
            | Exists(Gap.objects.filter(test=OuterRef("pk"), is_open=True))
        )
        .annotate(
            pending=ArraySubquery(PendingTest.objects.filter(test=OuterRef("pk")).values("backend"))
        )
        .order_by("key")
    )
    fields = ["pk", "key", "class_name", "name", "pending"]
    if chosen is None:
        return [(*t, None, p) for *t, p in found.values_list(*fields)]
    on_chosen = CurrentOutcome.objects.filter(test=OuterRef("pk"), backend_id=chosen)
    found = found.annotate(chosen=Subquery(on_chosen.values("outcome")[:1]))
    return [
        (*t, None if outcome is None else _LABELS[outcome], p)
        for *t, p, outcome in found.values_list(*fields, "chosen")
    ]


# The file's tests' outcomes and open gaps counted, by their ids as one array: planned as index
# probes per test, whatever share of the project's tests the file holds (its tests as a
# subquery were hashed against a scan of every current outcome).
_OUTCOME_COUNTS = model_sql(
    """
    SELECT backend_id, outcome, reason_id, count(*) FROM {current}
    WHERE project_id = %(project)s AND test_id = ANY(%(tests)s::bigint[])
    GROUP BY 1, 2, 3
    """,
    current=CurrentOutcome,
)
_GAP_COUNTS = model_sql(
    """
    SELECT backend_id,
           CASE WHEN NOT not_applicable THEN state WHEN state IN {absent} THEN {declared}
                ELSE {declared_ran} END,
           intended, reason_id, count(*) FROM {gap}
    WHERE project_id = %(project)s AND is_open AND test_id = ANY(%(tests)s::bigint[])
    GROUP BY 1, 2, 3, 4
    """,
    gap=Gap,
    absent=ABSENT,
    declared=sql.Literal(NOT_APPLICABLE),
    declared_ran=sql.Literal(_DECLARED_RAN),
)


def _file_read(project: Project, tests: list[int], names: dict[int, str], pending: set) -> _Read:
    """``tests``: the ids of the file's tests some current run has or some open gap names."""
    params = {"project": project.pk, "tests": tests}
    gaps: Counter = Counter()
    with read_cursor() as cursor:
        cursor.execute(_OUTCOME_COUNTS, params)
        outcomes = {
            (backend_id, _LABELS[outcome], reason_id): n
            for backend_id, outcome, reason_id, n in cursor.fetchall()
        }
        reason_ids = {r for _, _, r in outcomes}
        cursor.execute(_GAP_COUNTS, params)
        for backend_id, state, intended, reason_id, n in cursor.fetchall():
            gaps[(backend_id, state, intended)] += n
            reason_ids.add(reason_id)
    return _Read(
        names=names,
        outcomes=outcomes,
        gaps=dict(gaps),
        reasons=_reasons(reason_ids - {None}),
        pending=pending,
    )


def _never_ran(read: _Read) -> list[NeverRan]:
    """The backends none of whose tests of the file has an outcome, though some have a gap."""
    ran = {backend_id for backend_id, _, _ in read.outcomes}
    found = []
    for backend_id, name in read.names.items():
        gaps = {key: n for key, n in read.gaps.items() if key[0] == backend_id}
        if not gaps or backend_id in ran:
            continue
        states = {state for _, state, _ in gaps}
        found.append(
            NeverRan(
                backend=name,
                tests=sum(gaps.values()),
                intended=sum(n for (_, _, intended), n in gaps.items() if intended),
                state=states.pop() if len(states) == 1 else "",
            )
        )
    return found


def _reasons(ids: set[int]) -> dict[int, ReasonInfo]:
    if not ids:
        return {}
    return reason_infos(list(Reason.objects.filter(pk__in=ids).prefetch_related("issues")))


def _row(test: tuple, read: _Read, outcomes: dict, gaps: dict, columns: list) -> TestRow:
    """A test's (pk, key, class name, name, ...) cells on the grid's ``columns`` (backend pks)
    from the page's ``outcomes`` ((test, backend) -> outcome, reason) and ``gaps``."""
    pk, key, class_name, name, *_ = test
    cells = []
    for backend_id in columns:
        outcome, reason_id = outcomes.get((pk, backend_id), (None, None))
        gap = gaps.get((pk, backend_id))
        cells.append(
            TestCell(
                backend=read.names[backend_id],
                outcome=outcome,
                reason=read.reasons.get(reason_id),
                gap=gap_info(gap, read.reasons) if gap else None,
                pending=(pk, backend_id) in read.pending,
            )
        )
    return TestRow(id=pk, key=key, name=display_id("", class_name, name), cells=cells)


def _counts(read: _Read, tests: set[int]) -> list[tuple[str, list[int]]]:
    """Each backend's ``tests`` of the file by outcome; "missing" those it has no outcome for
    (a pending test has none: its backend's run lacks it)."""
    counts = {backend_id: Counter() for backend_id in read.names}
    for (backend_id, outcome, reason_id), n in read.outcomes.items():
        reason = read.reasons.get(reason_id)
        xfail = outcome == "skipped" and reason is not None and is_expected_failure(reason.text)
        counts[backend_id]["xfail" if xfail else outcome] += n
    for backend_id, counted in counts.items():
        pending = sum(1 for t, b in read.pending if b == backend_id and t in tests)
        counted[PENDING_ROW] = pending
        # Declared tests the run lacks (a declared test that ran counts by its outcome).
        declared = read.gaps_absent_declared(backend_id)
        counted[NOT_APPLICABLE_ROW] = declared
        counted["missing"] = len(tests) - sum(counted.values())
    return [
        (outcome, [counts[pk][outcome] for pk in read.names])
        for outcome in SUMMARY_ROWS
        if outcome not in OPTIONAL_ROWS or any(c[outcome] for c in counts.values())
    ]


def _reason_counts(read: _Read, backend: str | None) -> list[ReasonCount]:
    """Reasons of the tests not passing on ``backend`` (or any backend): those that gave no
    reason first (the first to fix), then the most tests first. Tests not in the run are the
    page's ``absent``."""
    counts: Counter = Counter()
    for (backend_id, outcome, reason_id), n in read.outcomes.items():
        if outcome == "passed" or (backend is not None and read.names[backend_id] != backend):
            continue
        reason_id = reason_id if reason_id in read.reasons else None
        counts[(reason_id, outcome)] += n
    infos: dict[int | None, ReasonInfo | None] = {None: None, **read.reasons}
    ordered = sorted(
        counts.items(),
        key=lambda item: (item[0][0] is not None, -item[1], _text(infos[item[0][0]])),
    )
    return [
        ReasonCount(reason=infos[reason_id], outcome=outcome, count=n)
        for (reason_id, outcome), n in ordered
    ]


def _text(reason: ReasonInfo | None) -> str:
    return reason.text if reason else ""
