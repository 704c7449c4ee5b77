"""Reads that several selectors share, so that each page's or endpoint's selector runs them
directly instead of calling another page's selector. None of these is a page's answer on its
own; each is one query (or none) and says so."""

import posixpath
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Count, F
from django.db.models.expressions import OrderBy

from parity.definitions import Standing, gap_standing, history_kept
from parity.models import (
    Backend,
    FileCell,
    FileGapCount,
    Gap,
    IssueState,
    PendingTest,
    Project,
    Reason,
    Snapshot,
    TrackingIssue,
    Triage,
)
from parity.models.sql import model_sql
from parity.pure.normalize import is_expected_failure
from parity.pure.scores import DEFAULT, Counts, Definition, Scores, alternatives, scores
from parity.read_replica import read_cursor

CELL_FIELDS = ("passed", "failed", "error", "skipped", "missing")
# A cell's count of the reference-passing tests the backend's run lacks because the reference
# first ran them after it (``PendingTest``): not yet run there, no gap.
PENDING = "pending"
GAP_FIELDS = ("skipped", "failed", "error", "missing")


def reference_first(project: Project, backends: list[Backend]) -> list[Backend]:
    """Backends in page order: the reference first (every other backend is read against it),
    then by name."""
    return sorted(backends, key=lambda b: (b.pk != project.reference_backend_id, b.name))


def rows_per_page(per_page: int, *, cells_per_page: int | None, columns: int, least: int) -> int:
    """A grid's rows a page: ``per_page``, fewer when that many rows of ``columns`` would be
    more than ``cells_per_page`` cells (many backends), but never fewer than ``least``."""
    if not cells_per_page:
        return per_page
    return min(per_page, max(least, cells_per_page // max(1, columns)))


def backend_names(project: Project) -> dict[int, str]:
    """Backend pk -> name in page order (``reference_first``). One query."""
    pairs = project.backends.values_list("pk", "name")
    return dict(sorted(pairs, key=lambda p: (p[0] != project.reference_backend_id, p[1])))


@dataclass(frozen=True)
class IssueInfo:
    """A tracking issue as its tracker last said (``parity.services.issue_sync``): ``state`` is
    unknown until read, and ``title`` empty."""

    key: str
    url: str
    title: str
    state: str  # parity.models.IssueState
    closed_at: datetime | None = None

    @property
    def ref(self) -> str:
        """What lists of issues show: the URL, else the key."""
        return self.url or self.key

    @property
    def closed(self) -> bool:
        return self.state == IssueState.CLOSED


def issue_info(issue: TrackingIssue) -> IssueInfo:
    return IssueInfo(
        key=issue.key,
        url=issue.url,
        title=issue.title,
        state=issue.state,
        closed_at=issue.closed_at,
    )


def issue_infos(*, reason: Reason | None, triage: Triage | None) -> list[IssueInfo]:
    """Where a gap is tracked: its reason's issues, then its triage's, each once. Reads
    ``reason.issues`` (prefetch it) and ``triage.issue`` (select it)."""
    issues = list(reason.issues.all()) if reason is not None else []
    if triage is not None and triage.issue is not None:
        issues.append(triage.issue)
    return list({issue.key: issue_info(issue) for issue in issues}.values())


def issue_urls(*, reason: Reason | None, triage: Triage | None) -> list[str]:
    """``issue_infos`` as the API lists them: each issue's URL, else its key."""
    return list(dict.fromkeys(i.ref for i in issue_infos(reason=reason, triage=triage)))


def all_closed(issues: list[IssueInfo]) -> bool:
    """Every issue cited is closed (and one is): the engine's ``tracked_closed`` over issues
    already read (``parity.definitions.cited_issues_closed`` is the same rule in SQL)."""
    return bool(issues) and all(issue.closed for issue in issues)


# --- Each backend's current numbers (``BackendState`` -> current run and ``Snapshot``) ------------


class Scored:
    """The scores of a backend's numbers (``passing``, ``reference_passing``, ``intended``,
    ``not_applicable``, ``reference_tests``, ``differ_not_passed``, ``not_applicable_not_passed``)
    by its project's ``definition``: what a card, the API and the heatmap's backends show."""

    @property
    def counts(self) -> Counts:
        return Counts(
            passing=self.passing,
            compared=self.reference_passing,
            intended=self.intended,
            not_applicable=self.not_applicable,
            reference_tests=self.reference_tests,
            differ_not_passed=self.differ_not_passed,
            not_applicable_not_passed=self.not_applicable_not_passed,
        )

    @property
    def scores(self) -> Scores:
        """The headline by the project's definition, and the raw figure."""
        return scores(self.counts, self.definition)

    @property
    def alternatives(self) -> list[tuple[Definition, float | None]]:
        """The other agreement definition's figure, beside the headline."""
        return alternatives(self.counts, self.definition)


@dataclass(frozen=True)
class BackendParity(Scored):
    backend: str
    is_reference: bool
    run: int | None = None
    commit: str | None = None
    complete: bool = False
    started_at: datetime | None = None
    score: float | None = None
    passing: int = 0
    reference_passing: int = 0
    gaps: dict[str, int] = field(default_factory=lambda: dict.fromkeys(GAP_FIELDS, 0))
    tracked: int = 0
    untracked: int = 0
    intended: int = 0
    tracked_closed: int = 0  # of the tracked, those whose every issue is closed
    reference_missing: int = 0
    pending: int = 0  # not yet run there: the reference first ran them after this run
    not_applicable: int = 0  # reference-passing tests declared not applicable here
    rerun: int = 0  # reference-passing tests in files infrastructure lost: to rerun
    reference_tests: int | None = None  # for the agreement scores (``snapshot_counts``)
    differ_not_passed: int = 0
    not_applicable_not_passed: int = 0
    test_count: int = 0
    coverage_drop: bool = False
    definition: Definition = DEFAULT  # the project's score definition
    # The aligned view (``parity.selectors.aligned``): the reference's run compared with
    # ``run``, of the same ``commit``. None otherwise (the reference's current run).
    reference_run: int | None = None
    family: str = ""  # a variant's family (``Backend.family``); "" for a family or a flat one


def snapshot_counts(snapshot: Snapshot) -> dict:
    """A snapshot's numbers the scores need (``parity.pure.scores.Counts``'s fields). A snapshot
    written before the agreement counts were kept has none (``reference_tests`` None: its
    agreement falls back to the reference-passing share)."""
    known = snapshot.reference_tests > 0 or snapshot.reference_passing == 0
    return {
        "passing": snapshot.passing,
        "reference_passing": snapshot.reference_passing,
        "intended": snapshot.intended,
        "not_applicable": snapshot.not_applicable,
        "rerun": snapshot.rerun,
        "reference_tests": snapshot.reference_tests if known else None,
        "differ_not_passed": snapshot.differ_not_passed,
        "not_applicable_not_passed": snapshot.not_applicable_not_passed,
    }


def backend_parities(*, project: Project) -> list[BackendParity]:
    """Every backend's current run and its snapshot's numbers, the reference first. One
    query, however long the history."""
    backends = Backend.objects.filter(project=project).select_related(
        "state__current_run", "state__snapshot"
    )
    reference = project.reference_backend_id
    definition = project.score_settings()
    backends = reference_first(project, list(backends))
    names = {b.pk: b.name for b in backends}
    return [
        _backend_parity(
            b,
            is_reference=b.pk == reference,
            definition=definition,
            family=names.get(b.family_id, ""),
        )
        for b in backends
    ]


def _backend_parity(
    backend: Backend, *, is_reference: bool, definition: Definition, family: str = ""
) -> BackendParity:
    state = getattr(backend, "state", None)
    run = state.current_run if state else None
    if run is None:
        return BackendParity(
            backend=backend.name, is_reference=is_reference, definition=definition, family=family
        )
    snapshot: Snapshot | None = state.snapshot
    numbers = {}
    # A snapshot of an older run is no current number (the engine repoints it on recompute).
    if snapshot is not None and snapshot.run_id == run.pk:
        numbers = {
            "score": None if snapshot.score is None else round(snapshot.score, 4),
            **snapshot_counts(snapshot),
            "gaps": {name: getattr(snapshot, name) for name in GAP_FIELDS},
            "tracked": snapshot.tracked,
            "untracked": snapshot.untracked,
            "tracked_closed": snapshot.tracked_closed,
            "reference_missing": snapshot.reference_missing,
            "pending": snapshot.pending,
        }
    return BackendParity(
        backend=backend.name,
        is_reference=is_reference,
        run=run.pk,
        commit=run.commit,
        complete=run.complete,
        started_at=run.started_at,
        test_count=state.test_count,
        coverage_drop=state.coverage_drop,
        definition=definition,
        family=family,
        **numbers,
    )


def headline_score(snapshot: Snapshot, definition: Definition) -> float | None:
    """A snapshot's headline score (``parity.pure.scores``, by the project's ``definition``);
    None where it stores no score (no reference run to compare with)."""
    if snapshot.score is None:
        return None
    counts = snapshot_counts(snapshot)
    counts["compared"] = counts.pop("reference_passing")
    del counts["rerun"]  # outside the score
    return scores(Counts(**counts), definition).headline


# --- The file heatmap's counts (``FileCell``) -----------------------------------------------------


def folder_of(file: str) -> str:
    return posixpath.dirname(file) or "."


def file_counts(
    *, project: Project, names: list[str], by_dir: bool = False, pending: bool = False
) -> dict[str, dict[str, dict[str, int]]]:
    """Per test file (or folder), per backend name in ``names``, its counts of CELL_FIELDS in
    the backend's current run, and of its tests ``pending`` there, read only with ``pending``
    (some backend's snapshot counts some); every backend has a cell. One query, two with
    ``pending`` (grouped in Postgres)."""
    cells = FileCell.objects.filter(project=project).values_list(
        "backend__name", "file", *CELL_FIELDS
    )
    zero = dict.fromkeys((*CELL_FIELDS, PENDING), 0)
    totals: dict[str, dict[str, dict[str, int]]] = {}
    for backend, file, *counts in cells:
        key = folder_of(file) if by_dir else file
        row = totals.get(key)
        if row is None:
            row = totals[key] = {name: zero.copy() for name in names}
        cell = row[backend]
        for name, count in zip(CELL_FIELDS, counts, strict=True):
            cell[name] += count
    pending_rows = (
        PendingTest.objects.filter(project=project)
        .values_list("backend__name", "test__file")
        .annotate(count=Count("pk"))
        .order_by()
    )
    for backend, file, count in pending_rows if pending else ():
        # The reference passes a pending test: its file has cells already.
        key = folder_of(file) if by_dir else file
        row = totals.get(key)
        if row is None:
            row = totals[key] = {name: zero.copy() for name in names}
        row[backend][PENDING] += count
    return {key: totals[key] for key in sorted(totals)}


def file_flaky_add(
    counts: dict[str, dict[str, dict[str, int]]], *, project: Project, by_dir: bool = False
) -> None:
    """Each cell of ``counts`` (``file_counts``') gets ``flaky``: of its open gaps, those that
    read flaky (``FileGapCount.flaky``). One query, of the cells with some, for a project that
    keeps states from history; none otherwise (every cell 0)."""
    for row in counts.values():
        for cell in row.values():
            cell.setdefault("flaky", 0)
    if not history_kept(project):
        return
    rows = FileGapCount.objects.filter(project=project, flaky__gt=0).values_list(
        "backend__name", "file", "flaky"
    )
    for backend, file, flaky in rows:
        row = counts.get(folder_of(file) if by_dir else file)
        if row is not None and backend in row:
            row[backend] = {**row[backend], "flaky": row[backend]["flaky"] + flaky}


# A heatmap cell's counts as ``file_cell_counts`` reads them: CELL_FIELDS, then the open gaps'.
_OPEN_GAP_FIELDS = ("gaps", "intended", "not_applicable", "rerun", "flaky")
_CELL_KEYS = (*CELL_FIELDS, *_OPEN_GAP_FIELDS, PENDING)
# Each file cell with its open gaps (``FileGapCount``): an open gap's test is in the backend's
# run or counted missing there, so its (backend, file) has a file cell.
_FILE_CELL_COUNTS_SQL = model_sql(
    """
    SELECT c.file, b.name, c.passed, c.failed, c.error, c.skipped, c.missing,
           coalesce(g.gaps, 0), coalesce(g.intended, 0), coalesce(g.not_applicable, 0),
           coalesce(g.rerun, 0), coalesce(g.flaky, 0), 0
    FROM {cell} c
    JOIN {backend} b ON b.id = c.backend_id
    LEFT JOIN {gaps} g ON g.backend_id = c.backend_id AND g.file = c.file
    WHERE c.project_id = %(project)s
    """,
    cell=FileCell,
    backend=Backend,
    gaps=FileGapCount,
)


def file_cell_counts(
    *, project: Project, names: list[str], pending: bool = False
) -> dict[str, dict[str, dict[str, int]]]:
    """``file_counts`` (per file) with each cell's open gaps merged in (``_OPEN_GAP_FIELDS``, as
    ``FileGapCount`` keeps them), read in one query, two with ``pending``. A backend of
    ``names`` without a cell in a file gets a shared cell of zeros: read it, never write it."""
    zero = dict.fromkeys(_CELL_KEYS, 0)
    totals: dict[str, dict[str, dict[str, int]]] = {}
    with read_cursor() as cursor:
        cursor.execute(_FILE_CELL_COUNTS_SQL, {"project": project.pk})
        for record in cursor.fetchall():
            file = record[0]
            row = totals.get(file)
            if row is None:
                row = totals[file] = dict.fromkeys(names, zero)
            row[record[1]] = dict(zip(_CELL_KEYS, record[2:], strict=True))
    pending_rows = (
        PendingTest.objects.filter(project=project)
        .values_list("backend__name", "test__file")
        .annotate(count=Count("pk"))
        .order_by()
    )
    for backend, file, count in pending_rows if pending else ():
        row = totals.get(file)
        if row is None:
            row = totals[file] = dict.fromkeys(names, zero)
        cell = row.get(backend, zero)
        if cell is zero:
            cell = row[backend] = dict(zero)
        cell[PENDING] += count
    return {key: totals[key] for key in sorted(totals)}


# --- One test on one backend: its outcome, reason and open gap (file and test pages) --------------


@dataclass(frozen=True)
class ReasonInfo:
    id: int
    text: str
    issues: list[IssueInfo]


@dataclass(frozen=True)
class GapInfo:
    id: int
    state: str
    tracked: bool
    intended: bool
    triage: str | None  # "tracked", "intended" or None
    note: str
    issues: list[IssueInfo]  # the reason's and the triage's
    tracked_closed: bool = False  # tracked, and every issue it cites is closed
    # What the pages show (``parity.definitions.standing``): not applicable, lost to
    # infrastructure, or the gap with its triage.
    standing: Standing = Standing("")


@dataclass(frozen=True)
class TestCell:
    __test__ = False  # not a pytest test class

    backend: str
    outcome: str | None  # passed, skipped, failed, error; None: not in the current run
    reason: ReasonInfo | None
    gap: GapInfo | None
    # Not in the backend's current run because the reference first ran it after that run
    # (``PendingTest``): not yet run there, no gap.
    pending: bool = field(default=False, kw_only=True)

    @property
    def xfail(self) -> bool:
        """An expected failure: a skip whose reason says so (it counts as a skip)."""
        return (
            self.outcome == "skipped"
            and self.reason is not None
            and is_expected_failure(self.reason.text)
        )

    @property
    def issues(self) -> list[IssueInfo]:
        """Where the outcome is tracked: its gap's issues (reason's and triage's), else its
        reason's."""
        if self.gap is not None:
            return self.gap.issues
        return self.reason.issues if self.reason is not None else []


def reason_infos(reasons: list[Reason]) -> dict[int, ReasonInfo]:
    """Reads ``reason.issues`` (prefetch it)."""
    return {
        r.pk: ReasonInfo(id=r.pk, text=r.text, issues=issue_infos(reason=r, triage=None))
        for r in reasons
    }


def gap_info(gap: Gap, reasons: dict[int, ReasonInfo]) -> GapInfo:
    """Reads ``gap.triage.issue`` (select it)."""
    reason = reasons.get(gap.reason_id)
    triage = gap.triage
    issues = list(reason.issues) if reason else []
    issues += issue_infos(reason=None, triage=triage)
    return GapInfo(
        id=gap.pk,
        state=gap.state,
        tracked=gap.tracked,
        intended=gap.intended,
        triage=triage.kind if triage else None,
        note=triage.note if triage else "",
        issues=list({issue.key: issue for issue in issues}.values()),
        tracked_closed=gap.tracked_closed,
        standing=gap_standing(gap),
    )


def pending_pairs(*, project: Project, tests) -> set[tuple[int, int]]:
    """(test_id, backend_id) of ``tests`` (ids or a queryset) pending on a backend. One query."""
    return set(
        PendingTest.objects.filter(project=project, test__in=tests).values_list(
            "test_id", "backend_id"
        )
    )


def sort_order(
    sort: str, columns: dict[str, tuple[str, ...]], default: str
) -> tuple[str, list[OrderBy | str]]:
    """A list's ``?sort=``: a column's name, ascending, or ``-`` and its name, descending, of
    ``columns`` (name -> the fields it orders by: its own, then the ties', always ascending);
    an unknown one is ``default``; empty values last either way. Returns the sort in force and
    ``order_by``'s arguments. No query."""
    name = sort.removeprefix("-")
    if name not in columns:
        sort, name = default, default.removeprefix("-")
    first, *ties = columns[name]
    column = F(first).desc(nulls_last=True) if sort.startswith("-") else F(first).asc()
    return sort, [column, *ties]
