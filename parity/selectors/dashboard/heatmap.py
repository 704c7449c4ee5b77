"""The parity heatmap: test files (or folders) x backends, from the engine's ``FileCell`` rows
(via ``parity_overview``), filtered by name and sorted by parity."""

from dataclasses import dataclass

from parity.models import Project
from parity.selectors.parity import BackendParity, folder_of, parity_overview

# "worst": the row's lowest share on any backend but the reference; a backend name: that
# backend's share; "name": alphabetical.
HEATMAP_SORTS = ("worst", "name")
# Lower bounds of the colour bins, best first (site.css .s6 … .s0).
SHADE_BOUNDS = (1.0, 0.95, 0.8, 0.6, 0.4, 0.2, 0.0)


@dataclass(frozen=True)
class HeatCell:
    backend: str
    passed: int = 0
    failed: int = 0
    error: int = 0
    skipped: int = 0
    missing: int = 0  # reference-passing tests the backend's current run lacks

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.error + self.skipped + self.missing

    @property
    def share(self) -> float | None:
        """Passing tests / the row's tests known on this backend; None when it has none."""
        return self.passed / self.total if self.total else None

    @property
    def shade(self) -> str:
        """The colour bin, 6 (all pass) … 0 (under 20 %), or "none" (nothing run)."""
        share = self.share
        if share is None:
            return "none"
        for index, bound in enumerate(SHADE_BOUNDS):
            if share >= bound:
                return str(len(SHADE_BOUNDS) - 1 - index)
        return "0"

    @property
    def absent(self) -> bool:
        """None of the row's tests is in the backend's run, though the reference passes some."""
        return self.missing > 0 and self.passed + self.failed + self.error + self.skipped == 0

    @property
    def counts_text(self) -> str:
        """The hover text (built here: a template would take ten lookups per cell)."""
        return (
            f"{self.passed} passed, {self.failed} failed, {self.error} error, "
            f"{self.skipped} skipped, {self.missing} missing"
        )

    @property
    def label(self) -> str:
        return f"{self.passed}/{self.total}" if self.total else "–"


@dataclass(frozen=True)
class HeatRow:
    name: str  # a test file, or a folder ("." for the root)
    cells: list[HeatCell]  # in the order of Heatmap.backends


@dataclass(frozen=True)
class Heatmap:
    backends: list[BackendParity]  # the reference first
    rows: list[HeatRow]
    total_rows: int  # before the name filter
    folders: bool
    folder: str
    q: str
    sort: str


def heatmap(
    *, project: Project, folders: bool = False, folder: str = "", q: str = "", sort: str = "worst"
) -> Heatmap:
    """Rows of files (of one folder when ``folder`` is set) or of folders, whose name contains
    ``q``, sorted by ``sort`` (``HEATMAP_SORTS`` or a backend name). Two queries."""
    by_dir = folders and not folder
    overview = parity_overview(project=project, by_dir=by_dir)
    names = [b.backend for b in overview.backends]
    rows = [
        HeatRow(name=row.file, cells=[HeatCell(backend=n, **row.cells[n]) for n in names])
        for row in overview.files
        if not folder or folder_of(row.file) == folder
    ]
    total = len(rows)
    needle = q.strip().lower()
    if needle:
        rows = [row for row in rows if needle in row.name.lower()]
    if sort not in names and sort not in HEATMAP_SORTS:
        sort = "worst"
    return Heatmap(
        backends=overview.backends,
        rows=_sorted(rows, sort=sort, names=names, reference=overview.reference),
        total_rows=total,
        folders=by_dir,
        folder=folder,
        q=q.strip(),
        sort=sort,
    )


def _sorted(
    rows: list[HeatRow], *, sort: str, names: list[str], reference: str | None
) -> list[HeatRow]:
    if sort == "name":
        return sorted(rows, key=lambda r: r.name)
    if sort in names:
        column = names.index(sort)
        return sorted(rows, key=lambda r: (*_badness(r.cells[column]), r.name))
    compared = [c for c, name in enumerate(names) if name != reference] or range(len(names))
    return sorted(rows, key=lambda r: (min(_badness(r.cells[c]) for c in compared), r.name))


def _badness(cell: HeatCell) -> tuple:
    """Sort key: lowest share first, then the most tests not passing; empty cells last."""
    share = cell.share
    return (share is None, share or 0.0, -(cell.total - cell.passed))
