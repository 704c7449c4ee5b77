"""The project page's heatmap: test files (or folders) x backends, from the engine's
``FileCell`` rows and the open gaps per file, filtered by name and sorted by parity against the
reference. Colours and labels are the dashboard's (``parity.dashboard.presenters``)."""

from dataclasses import dataclass, field, replace
from functools import cached_property

from django.core.paginator import Page, Paginator

from parity.definitions import history_kept
from parity.models import Project
from parity.pure.scores import (
    DEFAULT,
    Counts,
    Definition,
    Scores,
    counted_gaps,
    score,
    scores,
)
from parity.selectors.aligned import Aligned, aligned_backends, aligned_file_counts
from parity.selectors.families import BY_FAMILY, BY_VARIANT, Families, families_named
from parity.selectors.fragments import (
    CELL_FIELDS,
    PENDING,
    BackendParity,
    backend_parities,
    file_cell_counts,
    file_counts,
    folder_of,
    rows_per_page,
)
from parity.selectors.owners import files_owners, owner_clean
from parity.selectors.run_files import unrun_files

# "worst": the most gaps against the reference (on every backend but it) first; a backend name:
# the most gaps on that backend first; "name": alphabetical. A leading "-" reverses the order.
HEATMAP_SORTS = ("worst", "name")
# The fewest rows a page holds, however many backends share its ``cells_per_page``.
MIN_ROWS_PER_PAGE = 20


@dataclass(frozen=True)
class CellCounts:
    """A file's (or folder's) tests on one backend, by outcome in its current run, and how they
    compare with the reference's."""

    backend: str
    passed: int = 0
    failed: int = 0
    error: int = 0
    skipped: int = 0
    missing: int = 0  # reference-passing tests the backend's current run lacks
    # Reference-passing tests the reference first ran after the backend's current run: not yet
    # run there, so neither gaps nor compared (``compared`` leaves them out).
    pending: int = 0
    # The row's tests the reference passes, and how many of those do not pass on this backend
    # (its open gaps there: skipped, failed, error or missing). 0 gaps on the reference itself.
    reference_passed: int = 0
    gaps: int = 0
    intended: int = 0  # of the gaps, those a triage marks intended (by design)
    # Reference-passing tests declared not applicable here: neither gaps nor compared.
    not_applicable: int = 0
    # Reference-passing tests its file's infrastructure lost (crashed...): neither, to rerun.
    rerun: int = 0
    # Of the gaps, those that read flaky (``parity.definitions.reads_flaky_q``: the test flips
    # over the backend's window of runs, states from history): the cell's marker.
    flaky: int = 0
    is_reference: bool = False
    definition: Definition = DEFAULT  # the project's score definition
    # The reference's tests in the row, and how many it skips: why nothing may be a gap here.
    reference_tests: int = 0
    reference_skipped: int = 0
    # Why, for a file its run manifest says did not run normally: crashed, timed_out, empty,
    # not_run ("" for a folder, or a file that ran or that the manifest does not list).
    run_state: str = ""
    run_status: str = ""  # how its process ended: SIGSEGV, exit 124...
    # A family's cell (``?by=family``): its worst variant's counts (the lowest parity), that
    # variant's name, and how many of its variants with a current run have gaps here, of how many.
    worst: str = ""
    variants_failing: int = 0
    variants: int = 0

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.error + self.skipped + self.missing

    @property
    def share(self) -> float | None:
        """Passing tests / the row's tests known on this backend; None when it has none."""
        return self.passed / self.total if self.total else None

    @property
    def scores(self) -> Scores | None:
        """Of the tests the reference passes, the share that pass here, without the intended
        gaps (the headline) and with them (``parity.pure.scores``); None when the reference
        passes none of the row's tests (then nothing here is a gap) and on the reference."""
        counts = self._counts
        return scores(counts, self.definition) if counts is not None else None

    @cached_property  # a sort asks each cell several times, and needs no raw score
    def parity(self) -> float | None:
        """The headline score of ``scores``: None also when every gap compared is intended."""
        counts = self._counts
        return score(counts, self.definition) if counts is not None else None

    @property
    def _counts(self) -> Counts | None:
        compared = self.compared
        if self.is_reference or not compared:
            return None
        passing = max(compared - self.gaps, 0)
        return Counts(passing=passing, compared=compared, intended=self.intended)

    @property
    def counted_gaps(self) -> int:
        """The gaps counted against the backend: all but the intended ones."""
        return counted_gaps(gaps=self.gaps, intended=self.intended, definition=self.definition)

    @property
    def all_intended(self) -> bool:
        """Every gap here is intended: by design, not a failure (drawn apart)."""
        return not self.is_reference and self.gaps > 0 and self.intended >= self.gaps

    @property
    def compared(self) -> int:
        """The reference's passing tests this backend was asked to run: all but the pending,
        those declared not applicable and those infrastructure lost."""
        return max(self.reference_passed - self.pending - self.not_applicable - self.rerun, 0)

    @property
    def all_not_applicable(self) -> bool:
        """Every reference-passing test here is declared not applicable: drawn apart."""
        return not self.is_reference and self.not_applicable > 0 and not self.compared


@dataclass(frozen=True)
class HeatRow:
    name: str  # a test file, or a folder ("." for the root)
    cells: list[CellCounts]  # in the order of Heatmap.backends
    owners: tuple[str, ...] = ()  # a file's code owners (none for a folder)

    @property
    def gaps(self) -> int:
        """Gaps against the reference on every backend, intended ones not counted."""
        return sum(cell.counted_gaps for cell in self.cells)


@dataclass(frozen=True)
class Heatmap:
    backends: list[BackendParity]  # the reference first
    rows: list[HeatRow]
    total_rows: int  # before the name filter
    folders: bool
    folder: str
    q: str
    sort: str  # "worst", "name" or a backend name
    reverse: bool = False  # fewest gaps (or Z to A) first
    owner: str = ""  # only this code owner's files
    aligned: bool = False  # each backend read at the newest commit it and the reference ran
    by: str = BY_VARIANT  # a column per variant, or per family (``families.GROUPINGS``)
    has_families: bool = False  # some backend has variants: the page offers ``by``
    # Every backend with its own numbers (the summary cards above the table), whatever ``by``.
    cards: list[BackendParity] = field(default_factory=list)
    family_names: tuple[str, ...] = ()  # the columns that are families (``by`` "family")
    # The project keeps states from history: cells may carry a flaky count (the legend says so).
    history_kept: bool = False
    # The page of the sorted, filtered rows that ``rows`` holds (None: every row).
    pager: Page | None = None

    @property
    def matched(self) -> int:
        """The rows the name filter keeps, on every page."""
        return self.pager.paginator.count if self.pager is not None else len(self.rows)

    @property
    def sort_param(self) -> str:
        """``?sort=`` as the page was asked for it ("" for the default)."""
        if self.sort == "worst" and not self.reverse:
            return ""
        return f"-{self.sort}" if self.reverse else self.sort


@dataclass(frozen=True)
class HeatmapQuery:
    """What the heatmap page asks for (its query string), read once by the view: the selector
    cleans it (``_cleaned``) and falls back to the default sort for a column it does not have.
    The page's size comes along: with ``per_page``, the rows are paged."""

    folders: bool = False  # a row per folder of the tree (``?dir=1``), not per file
    folder: str = ""  # only the files of this folder ("." the root's)
    q: str = ""  # only the rows whose name contains it (without case)
    # ``HEATMAP_SORTS`` or a backend name (``Heatmap.sort``); a leading "-" reverses it.
    sort: str = "worst"
    owner: str = ""  # only the files this code owner owns
    by: str = BY_VARIANT  # a column per variant, or per family (``families.GROUPINGS``)
    page: int | str = 1  # as ``Paginator.get_page`` reads it: a bad one is the first or last
    per_page: int | None = None  # None: every row, no pager
    # At most this many cells (rows x columns) a page, never fewer rows than MIN_ROWS_PER_PAGE.
    cells_per_page: int | None = None


EVERY_FILE = HeatmapQuery()  # the default: every file, worst first, on one page


def heatmap(
    *,
    project: Project,
    query: HeatmapQuery = EVERY_FILE,
    aligned: Aligned | None = None,
    cell_type: type[CellCounts] = CellCounts,
) -> Heatmap:
    """Rows of files (of one folder when ``query.folder`` is set) or of folders, whose name
    contains ``query.q`` (of the files ``query.owner`` owns, when given), each file with its
    code owners, sorted by ``query.sort`` (``HEATMAP_SORTS`` or a backend name, reversed by a
    leading "-"). Four queries (three for folders, one more when a test is pending somewhere).
    With ``aligned`` (the view ``parity.result_reads.aligned_view`` read with its cells), each
    backend at its aligned commit. With ``query.per_page``, ``rows`` holds page
    ``query.page`` of them (``pager``; fewer rows when that many would be more than
    ``query.cells_per_page`` cells): every row is counted and sorted, and only a page's are
    drawn. ``cell_type``: the class of the cells built (the dashboard's ``HeatCell`` draws
    them).

    The steps: the backends and their families (``_backends``), each file's counts, current or
    at the aligned commits (``_file_counts``), the owner's files (``_owned``), the folder's or
    the folders' rows (``_foldered``), the columns, by variant or by family (``_table``), the
    rows ranked (``_ranked``, ``_sorted``) and the page of them (``_paged``)."""
    query = _cleaned(query)
    by_dir = query.folders and not query.folder
    backends, families = _backends(project)
    reference = next((b.backend for b in backends if b.is_reference), None)
    owners = files_owners(project=project)  # a row per file: no list of paths to send
    cards, counts = _file_counts(project=project, backends=backends, aligned=aligned)
    counts = _foldered(_owned(counts, query.owner, owners), query.folder, by_dir=by_dir)
    row_of = _RowMaker(
        names=[b.backend for b in backends],
        reference=reference,
        unrun={} if by_dir or aligned is not None else unrun_files(project=project),
        owners=owners,
        definition=project.score_settings(),
        cell_type=cell_type,
    )
    table = _table(cards, families, counts, row_of=row_of, by=query.by)
    sort, reverse = _sort_asked(query.sort, table.names)
    ranked = _sorted(_ranked(table, sort=sort, needle=query.q.lower()), sort=sort, reverse=reverse)
    pager, shown = _paged(ranked, query, columns=len(table.names))
    return Heatmap(
        backends=table.columns,
        rows=[r.row if r.row is not None else row_of(r.name, counts[r.name]) for r in shown],
        pager=pager,
        total_rows=len(counts),
        folders=by_dir,
        folder=query.folder,
        q=query.q,
        sort=sort,
        reverse=reverse,
        owner=query.owner,
        aligned=aligned is not None,
        by=table.by,
        has_families=families.any,
        cards=cards,
        family_names=tuple(families.variants) if table.by == BY_FAMILY else (),
        history_kept=history_kept(project) and aligned is None,
    )


def _cleaned(query: HeatmapQuery) -> HeatmapQuery:
    """The owner, the folder and the filter as rows name them."""
    return replace(
        query,
        owner=owner_clean(query.owner),
        folder=folder_clean(query.folder),
        q=query.q.strip(),
    )


def _backends(project: Project) -> tuple[list[BackendParity], Families]:
    """The project's backends (the reference first) and their families: a variant without a
    current run has no column. One query."""
    backends = backend_parities(project=project)
    families = families_named((b.backend, b.family) for b in backends)
    kept = [b for b in backends if b.run is not None or b.backend not in families.variants]
    return kept, families


def _file_counts(
    *, project: Project, backends: list[BackendParity], aligned: Aligned | None
) -> tuple[list[BackendParity], dict[str, dict[str, dict[str, int]]]]:
    """The backends as their cards show them and, per test file, each one's cell counts
    (``fragments.file_cell_counts``): their current runs', or with ``aligned`` those at each
    one's aligned commit. One query, or two when a test is pending somewhere."""
    names = [b.backend for b in backends]
    pending = any(b.pending for b in backends)
    if aligned is None:
        return backends, file_cell_counts(project=project, names=names, pending=pending)
    current = file_counts(project=project, names=names, pending=pending)
    return (
        aligned_backends(current=backends, view=aligned),
        aligned_file_counts(project=project, current=current, view=aligned),
    )


def _owned(counts: dict, owner: str, owners: dict[str, list[str]]) -> dict:
    """The files ``owner`` owns (every file without one)."""
    if not owner:
        return counts
    return {name: cells for name, cells in counts.items() if owner in owners.get(name, ())}


def _foldered(counts: dict, folder: str, *, by_dir: bool) -> dict:
    """The files of ``folder``, or with ``by_dir`` a row per folder (``_subtrees``)."""
    if folder:
        return {name: cells for name, cells in counts.items() if _under(name, folder)}
    return _subtrees(counts) if by_dir else counts


# A cell's standing in a sort: its counted gaps, its headline parity (None: nothing to compare)
# and whether it compares anything at all (a parity, or some gap).
Standing = tuple[int, float | None, bool]


@dataclass(frozen=True, slots=True)
class _Ranked:
    """A row as sorted: its name and the standing of each column the sort reads, and the row
    itself when it was built to be ranked (by family), else None (built once on the page)."""

    name: str
    standings: tuple[Standing, ...]  # in the order of ``_sort_columns``
    row: HeatRow | None


@dataclass(frozen=True)
class _RowMaker:
    """Builds a row's cells (``_row``) with what every row shares."""

    names: list[str]  # the backends, in their columns' order
    reference: str | None
    unrun: dict  # ``run_files.unrun_files`` by (backend, file); none for folders or aligned
    owners: dict[str, list[str]]
    definition: Definition
    cell_type: type[CellCounts]

    def __call__(self, name: str, cells: dict[str, dict[str, int]]) -> HeatRow:
        return _row(
            name,
            cells,
            names=self.names,
            reference=self.reference,
            unrun=self.unrun,
            owners=self.owners,
            definition=self.definition,
            cell_type=self.cell_type,
        )


@dataclass(frozen=True)
class _Table:
    """The heatmap's columns, and its rows before ranking. By family, every row is built (a
    family's cell is its worst variant's: every row's cells are built to pick it); by variant,
    rows are ranked by plain numbers, in the sorted columns alone, and only the shown page's
    rows are built as cells (``_raw_standings``)."""

    columns: list[BackendParity]
    names: list[str]  # the columns' names
    by: str  # ``BY_FAMILY`` only when some backend has variants
    counts: dict[str, dict[str, dict[str, int]]]  # per row, per backend (not per family)
    row_of: _RowMaker
    family_rows: list[HeatRow] | None = None  # by family: every row, built


def _table(
    cards: list[BackendParity],
    families: Families,
    counts: dict[str, dict[str, dict[str, int]]],
    *,
    row_of: _RowMaker,
    by: str,
) -> _Table:
    """The columns ``by`` asks for: a family's only when some backend has variants."""
    names = [b.backend for b in cards]
    if by != BY_FAMILY or not families.any:
        return _Table(columns=cards, names=names, by=BY_VARIANT, counts=counts, row_of=row_of)
    columns = _family_columns(cards, families)
    with_runs = {b.backend for b in cards if b.run is not None}
    rows = [
        _family_row(row_of(name, cells), columns, families, names, with_runs)
        for name, cells in counts.items()
    ]
    return _Table(
        columns=columns,
        names=[b.backend for b in columns],
        by=BY_FAMILY,
        counts=counts,
        row_of=row_of,
        family_rows=rows,
    )


def _sort_asked(sort: str, names: list[str]) -> tuple[str, bool]:
    """``?sort=`` as a column (``HEATMAP_SORTS`` or one of ``names``) and whether reversed: the
    default ("worst") for any other."""
    reverse = sort.startswith("-")
    sort = sort.removeprefix("-")
    if sort not in names and sort not in HEATMAP_SORTS:
        return "worst", False
    return sort, reverse


def _ranked(table: _Table, *, sort: str, needle: str) -> list[_Ranked]:
    """The rows whose name contains ``needle``, each with the standings of the columns ``sort``
    reads. By variant, from plain numbers: no row is built."""
    reference = table.row_of.reference
    columns = _sort_columns(sort, table.names, reference)
    if table.family_rows is not None:
        return [
            _Ranked(row.name, _standings(row, columns), row)
            for row in table.family_rows
            if needle in row.name.lower()
        ]
    wanted = [table.names[c] for c in columns]
    definition = table.row_of.definition
    return [
        _Ranked(name, _raw_standings(cells, wanted, reference, definition), None)
        for name, cells in table.counts.items()
        if needle in name.lower()
    ]


def _paged(
    ranked: list[_Ranked], query: HeatmapQuery, *, columns: int
) -> tuple[Page | None, list[_Ranked]]:
    """The page ``query`` asks for, and its rows: every row without ``query.per_page``."""
    if not query.per_page:
        return None, ranked
    per_page = rows_per_page(
        query.per_page,
        cells_per_page=query.cells_per_page,
        columns=columns,
        least=MIN_ROWS_PER_PAGE,
    )
    pager = Paginator(ranked, per_page).get_page(query.page)
    return pager, list(pager.object_list)


def _family_columns(backends: list[BackendParity], families: Families) -> list[BackendParity]:
    """The columns by family: the reference and flat backends as they are, each family once
    where its first member sorts."""
    columns: dict[str, BackendParity] = {}
    for b in backends:
        family = families.family_of.get(b.backend, b.backend)
        if family not in families.variants:
            columns[b.backend] = b
        elif family not in columns:
            columns[family] = BackendParity(backend=family, is_reference=False)
    return list(columns.values())


def _family_row(
    row: HeatRow,
    columns: list[BackendParity],
    families: Families,
    names: list[str],
    with_runs: set[str],
) -> HeatRow:
    cells = dict(zip(names, row.cells, strict=True))
    out = []
    for column in columns:
        name = column.backend
        if name not in families.variants:
            out.append(cells[name])
            continue
        # Its variants, and the family's own row when it ran too.
        members = [cells[n] for n in [*families.variants[name], name] if n in cells]
        out.append(_family_cell(name, [c for c in members if c.backend in with_runs]))
    return replace(row, cells=out)


def _family_cell(family: str, members: list[CellCounts]) -> CellCounts:
    """A family's cell: its worst variant's (the lowest parity, then the most gaps; a variant
    with nothing to compare only when none has any), with how many of its variants with a
    current run have gaps here. No variant with a run: an empty cell."""
    if not members:
        return CellCounts(backend=family)
    comparable = [c for c in members if _comparable(c)]
    worst = min(comparable or members, key=_worst_first)
    return replace(
        worst,
        backend=family,
        worst=worst.backend,
        variants_failing=sum(c.counted_gaps > 0 for c in members),
        variants=len(members),
    )


def _worst_first(cell: CellCounts) -> tuple:
    parity = cell.parity
    return (parity is None, parity or 0.0, -cell.counted_gaps, -cell.total)


def folder_clean(folder: str) -> str:
    """A folder as rows name it: "test/spmd/", as a folder row shows it, or "/test/spmd" read
    "test/spmd"; "." (the root) stays."""
    return folder.strip().strip("/")


def _under(file: str, folder: str) -> bool:
    return folder == "." and folder_of(file) == "." or file.startswith(f"{folder}/")


def _ancestors(file: str) -> list[str]:
    """The folders a file's counts add to: each folder above it ("test/spmd", "test"), or "."
    alone for a file at the root."""
    parts = file.split("/")[:-1]
    return ["/".join(parts[:n]) for n in range(len(parts), 0, -1)] or ["."]


def _subtrees(per_file: dict[str, dict[str, dict[str, int]]]) -> dict[str, dict[str, dict]]:
    """Per-file cells added up per folder, each folder's row the total of its whole subtree;
    folders by name. Summed per folder first, then each folder into those above it: a tree
    has far fewer folders than files."""
    per_folder: dict[str, dict[str, dict[str, int]]] = {}
    above: dict[str, list[str]] = {}  # a folder, and those above it
    for file, cells in per_file.items():
        folder = folder_of(file)
        if folder not in above:
            above[folder] = _ancestors(file)
        _add(per_folder.setdefault(folder, {}), cells)
    totals: dict[str, dict[str, dict[str, int]]] = {}
    for folder, cells in per_folder.items():
        for into in above[folder]:
            _add(totals.setdefault(into, {}), cells)
    return dict(sorted(totals.items()))


def _add(into: dict[str, dict[str, int]], cells: dict[str, dict[str, int]]) -> None:
    for backend, counts in cells.items():
        cell = into.setdefault(backend, {})
        for name, count in counts.items():
            cell[name] = cell.get(name, 0) + count


def _row(
    name: str,
    cells: dict[str, dict[str, int]],
    *,
    names: list[str],
    reference: str | None,
    unrun: dict,
    owners: dict[str, list[str]],
    definition: Definition,
    cell_type: type[CellCounts] = CellCounts,
) -> HeatRow:
    """``cells``: per backend, its CELL_FIELDS counts and its ``gaps``, when it has some;
    ``unrun``: ``run_files.unrun_files`` by (backend, file)."""
    ref = cells[reference] if reference else {}
    compared = {
        "reference_passed": ref.get("passed", 0),
        "reference_tests": sum(ref.get(field, 0) for field in CELL_FIELDS),
        "reference_skipped": ref.get("skipped", 0),
    }
    # An aligned cell carries the counts of the reference run it was compared with.
    return HeatRow(
        name=name,
        owners=tuple(owners.get(name, ())),
        cells=[
            cell_type(
                backend=n,
                **{
                    **compared,
                    **cells[n],
                    "gaps": 0 if n == reference else cells[n].get("gaps", 0),
                    "intended": 0 if n == reference else cells[n].get("intended", 0),
                },
                **_run(unrun.get((n, name))),
                is_reference=n == reference,
                definition=definition,
            )
            for n in names
        ],
    )


def _run(unrun) -> dict[str, str]:
    return {"run_state": unrun.state, "run_status": unrun.status} if unrun else {}


def cell_standing(
    *, gaps: int, intended: int, compared: int, is_reference: bool, definition: Definition
) -> Standing:
    """What sorts a cell, as ``CellCounts`` reads it (its ``counted_gaps``, ``parity`` and
    whether it is comparable), from plain numbers."""
    if not gaps:  # most cells: every compared test passes (no gap, so none intended)
        whole = compared and not is_reference
        return 0, (1.0 if whole else None), bool(whole)
    parity = None
    if not is_reference and compared:
        passing = max(compared - gaps, 0)
        counts = Counts(passing=passing, compared=compared, intended=intended)
        parity = score(counts, definition)
    counted = counted_gaps(gaps=gaps, intended=intended, definition=definition)
    return counted, parity, True


def _sort_columns(sort: str, names: list[str], reference: str | None) -> list[int]:
    """The columns ``sort`` reads: none by name, a backend's own, or every one but the
    reference's (by gaps against it)."""
    if sort == "name":
        return []
    if sort in names:
        return [names.index(sort)]
    return [c for c, name in enumerate(names) if name != reference]


def _standings(row: HeatRow, columns: list[int]) -> tuple[Standing, ...]:
    cells = [row.cells[c] for c in columns]
    return tuple((c.counted_gaps, c.parity, _comparable(c)) for c in cells)


def _raw_standings(
    cells: dict[str, dict[str, int]],
    names: list[str],
    reference: str | None,
    definition: Definition,
) -> tuple[Standing, ...]:
    """``_standings`` in the columns ``names`` of the row ``_row`` would build of ``cells``,
    without building it."""
    ref_passed = cells[reference].get("passed", 0) if reference else 0
    out = []
    for name in names:
        if name == reference:
            out.append((0, None, False))
            continue
        get = cells[name].get
        compared = max(
            get("reference_passed", ref_passed)  # an aligned cell carries its own
            - get(PENDING, 0)
            - get("not_applicable", 0)
            - get("rerun", 0),
            0,
        )
        gaps = get("gaps", 0)
        if not gaps:  # most cells (``cell_standing``'s first case, without the call)
            out.append((0, 1.0, True) if compared else (0, None, False))
            continue
        out.append(
            cell_standing(
                gaps=gaps,
                intended=get("intended", 0),
                compared=compared,
                is_reference=False,
                definition=definition,
            )
        )
    return tuple(out)


def _sorted(rows: list[_Ranked], *, sort: str, reverse: bool) -> list[_Ranked]:
    """Rows by ``sort``, reversed on asking, ties by name either way; rows with nothing to
    compare in the sorted columns (the reference passes none of their tests) come last either
    way, by name: reversed with the rest, they led "fewest gaps first" and a backend's best
    files. Each row's ``standings`` are those of the columns ``sort`` reads."""
    if sort == "name":
        return sorted(rows, key=lambda r: r.name, reverse=reverse)
    by_backend = sort != "worst"

    def key(row: _Ranked) -> tuple:
        worst = min((_badness(standing) for standing in row.standings), default=())
        if by_backend:
            return (worst,)
        return (-sum(standing[0] for standing in row.standings), worst)

    by_name = sorted(rows, key=lambda r: r.name)
    compared = [r for r in by_name if any(standing[2] for standing in r.standings)]
    unmatched = [r for r in by_name if not any(standing[2] for standing in r.standings)]
    return sorted(compared, key=key, reverse=reverse) + unmatched  # sorted() keeps ties' order


def _comparable(cell: CellCounts) -> bool:
    return cell.parity is not None or cell.gaps > 0


def _badness(standing: Standing) -> tuple:
    """Sort key: the most gaps first, then the lowest parity; cells the reference gives nothing
    to compare (no gap possible) last."""
    counted, parity, _ = standing
    return (-counted, parity is None, parity or 0.0)
