"""The parity page: each backend's current numbers and the file heatmap, read from the engine's
roll-ups (``BackendState`` → ``Snapshot``, ``FileCell``) in two queries, however long the
history."""

import posixpath
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from parity.models import Backend, FileCell, Project, Snapshot

CELL_FIELDS = ("passed", "failed", "error", "skipped", "missing")
GAP_FIELDS = ("skipped", "failed", "error", "missing")


@dataclass(frozen=True)
class BackendParity:
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
    reference_missing: int = 0
    test_count: int = 0
    coverage_drop: bool = False


@dataclass(frozen=True)
class FileRow:
    file: str  # a test file, or a folder ("." for the root) when aggregated by folder
    cells: dict[str, dict[str, int]]  # backend name -> counts of CELL_FIELDS


@dataclass(frozen=True)
class ProjectParity:
    project: str
    reference: str | None
    backends: list[BackendParity]
    files: list[FileRow]


def parity_overview(*, project: Project, by_dir: bool = False) -> ProjectParity:
    backends = _backends(project)
    names = {b.pk: b.name for b in backends}
    reference = names.get(project.reference_backend_id)
    return ProjectParity(
        project=project.slug,
        reference=reference,
        backends=[_backend_parity(b, is_reference=b.name == reference) for b in backends],
        files=file_rows(project=project, backend_names=names, by_dir=by_dir),
    )


def _backends(project: Project) -> list[Backend]:
    backends = Backend.objects.filter(project=project).select_related(
        "state__current_run", "state__snapshot"
    )
    # The reference first: every other backend is read against it.
    return sorted(backends, key=lambda b: (b.pk != project.reference_backend_id, b.name))


def _backend_parity(backend: Backend, *, is_reference: bool) -> BackendParity:
    state = getattr(backend, "state", None)
    run = state.current_run if state else None
    if run is None:
        return BackendParity(backend=backend.name, is_reference=is_reference)
    snapshot: Snapshot | None = state.snapshot
    numbers = {}
    if snapshot is not None and snapshot.run_id == run.pk:
        numbers = {
            "score": None if snapshot.score is None else round(snapshot.score, 4),
            "passing": snapshot.passing,
            "reference_passing": snapshot.reference_passing,
            "gaps": {name: getattr(snapshot, name) for name in GAP_FIELDS},
            "tracked": snapshot.tracked,
            "untracked": snapshot.untracked,
            "intended": snapshot.intended,
            "reference_missing": snapshot.reference_missing,
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
        **numbers,
    )


def file_rows(
    *, project: Project, backend_names: dict[int, str], by_dir: bool = False
) -> list[FileRow]:
    """The heatmap: one row per test file (or folder), a cell for every backend."""
    cells = FileCell.objects.filter(project=project).values_list("backend_id", "file", *CELL_FIELDS)
    totals: dict[str, dict[str, dict[str, int]]] = defaultdict(
        lambda: {name: dict.fromkeys(CELL_FIELDS, 0) for name in backend_names.values()}
    )
    for backend_id, file, *counts in cells:
        cell = totals[folder_of(file) if by_dir else file][backend_names[backend_id]]
        for name, count in zip(CELL_FIELDS, counts, strict=True):
            cell[name] += count
    return [FileRow(file=key, cells=totals[key]) for key in sorted(totals)]


def folder_of(file: str) -> str:
    return posixpath.dirname(file) or "."


def backend_files(*, project: Project) -> dict[str, set[str]]:
    """Per backend, the files with at least one result in its current run."""
    files: dict[str, set[str]] = {b.name: set() for b in project.backends.all()}
    rows = FileCell.objects.filter(project=project).values_list(
        "backend__name", "file", "passed", "failed", "error", "skipped"
    )
    for backend, file, *counts in rows:
        if any(counts):
            files[backend].add(file)
    return files
