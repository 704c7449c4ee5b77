"""One test file: its tests x backends with each test's outcome in the backend's current run
(``CurrentOutcome``), its reason and issues, and its open gap (``Gap``) with the triage."""

from collections import Counter
from dataclasses import dataclass

from django.core.paginator import Page, Paginator

from parity.models import CurrentOutcome, Gap, Outcome, Project, Reason, TestCase
from parity.pure.normalize import display_id, is_expected_failure
from parity.selectors.fragments import (
    ReasonInfo,
    TestCell,
    backend_names,
    gap_info,
    pending_pairs,
    reason_infos,
)
from parity.selectors.run_files import UnrunFile, unrun_files

# Tests the reference first ran after the backend's current run (shown only when there are).
PENDING_ROW = "not yet run there"
# With a backend chosen, its worst outcomes first: what a maintainer came to see.
_OUTCOME_ORDER = {"error": 0, "failed": 1, "skipped": 2, None: 3, "passed": 4}
SUMMARY_ROWS = ("passed", "skipped", "xfail", "failed", "error", "not run", PENDING_ROW)


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
    tests: int  # the file's tests it lacks that are gaps there (the reference passes them)
    intended: int  # of those, gaps a triage marks intended (by design)
    state: str  # their gap state when all share one (missing, crashed, not_run...), else ""


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
    """A file's tests on every backend, as values: what the whole page counts, read once;
    only a page's tests become rows."""

    names: dict[int, str]  # backend pk -> name, the reference first
    outcomes: dict[tuple[int, int], tuple[str, int | None]]  # (test, backend) -> outcome, reason
    gaps: dict[tuple[int, int], tuple[str, bool]]  # (test, backend) -> open gap's state, intended
    reasons: dict[int, ReasonInfo]
    pending: set[tuple[int, int]]

    def gaps_in(self, state: str, backends: list[str]) -> int:
        """The file's open gaps in ``state`` on ``backends`` (names)."""
        return sum(
            found == state and self.names[b] in backends for (_, b), (found, _) in self.gaps.items()
        )

    def outcome(self, test_id: int, backend_id: int) -> str | None:
        found = self.outcomes.get((test_id, backend_id))
        return found[0] if found else None


_LABELS = {value: label for value, label in Outcome.choices}


def file_grid(
    *,
    project: Project,
    file: str,
    backend: str | None = None,
    page: int | str = 1,
    per_page: int = 100,
) -> FileGrid:
    """Tests of ``file`` that some current run has or some open gap names, page ``page`` of
    them as rows; the counts, reasons and backends that never ran it of every test. Eight
    queries (nine when a test may be pending on a backend), whatever the page: the backends,
    outcomes, gaps, reasons and their issues, tests as values, then the page's gaps whole
    (triages and issues) and how the file ran (run manifests)."""
    names = backend_names(project)
    if backend not in names.values():
        backend = None
    in_file = TestCase.objects.filter(project=project, file=file)
    read = _file_read(project, in_file, names)
    # Tests no current run has and no gap names (renamed, deleted) are history: left out.
    present = {test_id for test_id, _ in read.outcomes} | {test_id for test_id, _ in read.gaps}
    tests = [
        t
        for t in in_file.order_by("key").values_list("pk", "key", "class_name", "name")
        if t[0] in present
    ]
    if backend is not None:
        chosen = next(pk for pk, name in names.items() if name == backend)
        tests.sort(key=lambda t: (_OUTCOME_ORDER[read.outcome(t[0], chosen)], t[1]))
    pager = Paginator(tests, per_page).get_page(page)
    shown = [t[0] for t in pager.object_list]
    gaps = {
        (g.test_id, g.backend_id): g
        for g in Gap.objects.filter(
            project=project, is_open=True, test_id__in=shown
        ).select_related("triage__issue")
    }
    picked = [n for n in names.values() if backend is None or n == backend]
    never_ran = [n for n in _never_ran(read) if n.backend in picked]
    folded = {n.backend for n in never_ran}
    columns = [pk for pk, name in names.items() if name not in folded]
    return FileGrid(
        file=file,
        backends=list(names.values()),
        reference=names.get(project.reference_backend_id),
        backend=backend,
        rows=[_row(test, read, gaps, columns) for test in pager.object_list],
        pager=pager,
        counts=_counts(read),
        reasons=_reason_counts(read, backend),
        absent=read.gaps_in("missing", picked),
        unrun=[
            (u, read.gaps_in(u.state, [name]))
            for (name, _), u in sorted(unrun_files(project=project, files=[file]).items())
            if name in picked
        ],
        never_ran=never_ran,
    )


def _file_read(project: Project, in_file, names: dict[int, str]) -> _Read:
    outcomes = {
        (test_id, backend_id): (_LABELS[outcome], reason_id)
        for test_id, backend_id, outcome, reason_id in CurrentOutcome.objects.filter(
            project=project, test__in=in_file
        ).values_list("test_id", "backend_id", "outcome", "reason_id")
    }
    gaps, reason_ids = {}, {r for _, r in outcomes.values()}
    for test_id, backend_id, state, intended, reason_id in Gap.objects.filter(
        project=project, is_open=True, test__in=in_file
    ).values_list("test_id", "backend_id", "state", "intended", "reason_id"):
        gaps[(test_id, backend_id)] = (state, intended)
        reason_ids.add(reason_id)
    return _Read(
        names=names,
        outcomes=outcomes,
        gaps=gaps,
        reasons=_reasons(reason_ids - {None}),
        pending=_pending(project, in_file, names, outcomes, gaps),
    )


def _never_ran(read: _Read) -> list[NeverRan]:
    """The backends none of whose tests of the file has an outcome, though some have a gap."""
    ran = {backend_id for _, backend_id in read.outcomes}
    found = []
    for backend_id, name in read.names.items():
        gaps = [gap for (_, b), gap in read.gaps.items() if b == backend_id]
        if not gaps or backend_id in ran:
            continue
        states = {state for state, _ in gaps}
        found.append(
            NeverRan(
                backend=name,
                tests=len(gaps),
                intended=sum(intended for _, intended in gaps),
                state=states.pop() if len(states) == 1 else "",
            )
        )
    return found


def _pending(project: Project, in_file, names: dict, outcomes: dict, gaps: dict) -> set:
    """``pending_pairs`` of the file's tests, read only when a test the reference passes has
    neither an outcome nor a gap on some backend (the only way one can be pending)."""
    reference = project.reference_backend_id
    passing = {
        test_id
        for (test_id, backend_id), (outcome, _) in outcomes.items()
        if backend_id == reference and outcome == "passed"
    }
    if all(
        (test_id, pk) in outcomes or (test_id, pk) in gaps for test_id in passing for pk in names
    ):
        return set()
    return pending_pairs(project=project, tests=in_file)


def _reasons(ids: set[int]) -> dict[int, ReasonInfo]:
    if not ids:
        return {}
    return reason_infos(list(Reason.objects.filter(pk__in=ids).prefetch_related("issues")))


def _row(
    test: tuple[int, str, str, str], read: _Read, gaps: dict[tuple[int, int], Gap], columns: list
) -> TestRow:
    """A test's (pk, key, class name, name) cells on the grid's ``columns`` (backend pks)."""
    pk, key, class_name, name = test
    cells = []
    for backend_id in columns:
        outcome, reason_id = read.outcomes.get((pk, backend_id), (None, None))
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


def _counts(read: _Read) -> list[tuple[str, list[int]]]:
    """Each backend's tests of the file by outcome; "not run" those it has no outcome for."""
    tests = {test_id for test_id, _ in read.outcomes} | {test_id for test_id, _ in read.gaps}
    counts = {backend_id: Counter() for backend_id in read.names}
    for (test_id, backend_id), (outcome, reason_id) in read.outcomes.items():
        reason = read.reasons.get(reason_id)
        xfail = outcome == "skipped" and reason is not None and is_expected_failure(reason.text)
        if (test_id, backend_id) not in read.pending:
            counts[backend_id]["xfail" if xfail else outcome] += 1
    for backend_id, counted in counts.items():
        pending = sum(1 for t, b in read.pending if b == backend_id and t in tests)
        counted[PENDING_ROW] = pending
        counted["not run"] = len(tests) - sum(counted.values())
    return [
        (outcome, [counts[pk][outcome] for pk in read.names])
        for outcome in SUMMARY_ROWS
        if outcome not in ("xfail", PENDING_ROW) or any(c[outcome] for c in counts.values())
    ]


def _reason_counts(read: _Read, backend: str | None) -> list[ReasonCount]:
    """Reasons of the tests not passing on ``backend`` (or any backend): those that gave no
    reason first (the first to fix), then the most tests first. Tests not in the run are the
    page's ``absent``."""
    counts: Counter = Counter()
    for (_, backend_id), (outcome, reason_id) in read.outcomes.items():
        if outcome == "passed" or (backend is not None and read.names[backend_id] != backend):
            continue
        reason_id = reason_id if reason_id in read.reasons else None
        counts[(reason_id, outcome)] += 1
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
