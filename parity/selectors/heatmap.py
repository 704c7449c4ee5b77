"""The project page's heatmap: test files (or folders) x backends, from the engine's
``FileCell`` rows, filtered by name and sorted by parity. Colours and labels are the
dashboard's (``parity.dashboard.presenters``)."""

from dataclasses import dataclass

from parity.models import Project
from parity.selectors.fragments import BackendParity, backend_parities, file_counts, folder_of

# "worst": the row's lowest share on any backend but the reference; a backend name: that
# backend's share; "name": alphabetical.
HEATMAP_SORTS = ("worst", "name")


@dataclass(frozen=True)
class CellCounts:
    """A file's (or folder's) tests on one backend, by outcome in its current run."""

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


@dataclass(frozen=True)
class HeatRow:
    name: str  # a test file, or a folder ("." for the root)
    cells: list[CellCounts]  # in the order of Heatmap.backends


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
    backends = backend_parities(project=project)
    names = [b.backend for b in backends]
    counts = file_counts(project=project, names=names, by_dir=by_dir)
    rows = [
        HeatRow(name=name, cells=[CellCounts(backend=n, **cells[n]) for n in names])
        for name, cells in counts.items()
        if not folder or folder_of(name) == folder
    ]
    total = len(rows)
    needle = q.strip().lower()
    if needle:
        rows = [row for row in rows if needle in row.name.lower()]
    if sort not in names and sort not in HEATMAP_SORTS:
        sort = "worst"
    reference = next((b.backend for b in backends if b.is_reference), None)
    return Heatmap(
        backends=backends,
        rows=_sorted(rows, sort=sort, names=names, reference=reference),
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


def _badness(cell: CellCounts) -> tuple:
    """Sort key: lowest share first, then the most tests not passing; empty cells last."""
    share = cell.share
    return (share is None, share or 0.0, -(cell.total - cell.passed))
