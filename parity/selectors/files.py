"""One test file: its tests x backends with each test's outcome in the backend's current run
(``CurrentOutcome``), its reason and issues, and its open gap (``Gap``) with the triage."""

from collections import Counter
from dataclasses import dataclass

from parity.models import CurrentOutcome, Gap, Outcome, Project, Reason, TestCase
from parity.pure.normalize import display_id
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
    rows: list[TestRow]
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
    def folded(self) -> NeverRan | None:
        """The chosen backend ran none of the file's tests: the page says so once."""
        return next((n for n in self.never_ran if n.backend == self.backend), None)


def file_grid(*, project: Project, file: str, backend: str | None = None) -> FileGrid:
    """Tests of ``file`` that some current run has or some open gap names. Seven queries, and
    an eighth when a test may be pending on a backend."""
    names = backend_names(project)
    if backend not in names.values():
        backend = None
    in_file = TestCase.objects.filter(project=project, file=file)
    outcomes = {
        (c.test_id, c.backend_id): c
        for c in CurrentOutcome.objects.filter(project=project, test__in=in_file)
    }
    gaps = {
        (g.test_id, g.backend_id): g
        for g in Gap.objects.filter(project=project, is_open=True, test__in=in_file).select_related(
            "triage__issue"
        )
    }
    pending = _pending(project, in_file, names, outcomes, gaps)
    reason_ids = {c.reason_id for c in outcomes.values()} | {g.reason_id for g in gaps.values()}
    reasons = _reasons(reason_ids - {None})
    # Tests no current run has and no gap names (renamed, deleted) are history: left out.
    present = {test_id for test_id, _ in outcomes} | {test_id for test_id, _ in gaps}
    rows = [
        _row(test, names, outcomes, gaps, reasons, pending)
        for test in in_file.order_by("key")
        if test.pk in present
    ]
    unrun = [
        (
            u,
            sum(
                c.gap is not None and c.gap.state == u.state and c.backend == name
                for row in rows
                for c in row.cells
            ),
        )
        for (name, _), u in sorted(unrun_files(project=project, files=[file]).items())
        if backend is None or name == backend
    ]
    if backend is not None:
        column = list(names.values()).index(backend)
        rows.sort(key=lambda r: (_OUTCOME_ORDER[r.cells[column].outcome], r.key))
    return FileGrid(
        file=file,
        backends=list(names.values()),
        reference=names.get(project.reference_backend_id),
        backend=backend,
        rows=rows,
        counts=_counts(rows, list(names.values())),
        reasons=_reason_counts(rows, backend),
        absent=sum(
            cell.gap is not None and cell.gap.state == "missing"
            for row in rows
            for cell in row.cells
            if backend is None or cell.backend == backend
        ),
        unrun=unrun,
        never_ran=[n for n in _never_ran(rows) if backend is None or n.backend == backend],
    )


def _never_ran(rows: list[TestRow]) -> list[NeverRan]:
    """The backends none of whose cells has an outcome, though some have a gap."""
    found = []
    for column, cell in enumerate(rows[0].cells if rows else []):
        cells = [row.cells[column] for row in rows]
        gaps = [c.gap for c in cells if c.gap is not None]
        if not gaps or any(c.outcome is not None for c in cells):
            continue
        states = {gap.state for gap in gaps}
        found.append(
            NeverRan(
                backend=cell.backend,
                tests=len(gaps),
                intended=sum(gap.intended for gap in gaps),
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
        for (test_id, backend_id), c in outcomes.items()
        if backend_id == reference and c.outcome == Outcome.PASSED
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
    test: TestCase,
    names: dict[int, str],
    outcomes: dict[tuple[int, int], CurrentOutcome],
    gaps: dict[tuple[int, int], Gap],
    reasons: dict[int, ReasonInfo],
    pending: set[tuple[int, int]],
) -> TestRow:
    cells = []
    for backend_id, name in names.items():
        current = outcomes.get((test.pk, backend_id))
        gap = gaps.get((test.pk, backend_id))
        reason_id = current.reason_id if current else None
        cells.append(
            TestCell(
                backend=name,
                outcome=Outcome(current.outcome).label if current else None,
                reason=reasons.get(reason_id),
                gap=gap_info(gap, reasons) if gap else None,
                pending=(test.pk, backend_id) in pending,
            )
        )
    return TestRow(
        id=test.pk, key=test.key, name=display_id("", test.class_name, test.name), cells=cells
    )


def _counts(rows: list[TestRow], names: list[str]) -> list[tuple[str, list[int]]]:
    counts = {name: Counter() for name in names}
    for row in rows:
        for cell in row.cells:
            outcome = "xfail" if cell.xfail else cell.outcome or "not run"
            if cell.pending:
                outcome = PENDING_ROW
            counts[cell.backend][outcome] += 1
    return [
        (outcome, [counts[name][outcome] for name in names])
        for outcome in SUMMARY_ROWS
        if outcome not in ("xfail", PENDING_ROW) or any(counts[name][outcome] for name in names)
    ]


def _reason_counts(rows: list[TestRow], backend: str | None) -> list[ReasonCount]:
    """Reasons of the tests not passing on ``backend`` (or any backend): those that gave no
    reason first (the first to fix), then the most tests first. Tests not in the run are the
    page's ``absent``."""
    counts: Counter = Counter()
    infos: dict[int | None, ReasonInfo | None] = {None: None}
    for row in rows:
        for cell in row.cells:
            if cell.outcome in (None, "passed") or (
                backend is not None and cell.backend != backend
            ):
                continue
            reason_id = cell.reason.id if cell.reason else None
            counts[(reason_id, cell.outcome)] += 1
            infos[reason_id] = cell.reason
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
