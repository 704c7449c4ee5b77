"""The parity endpoint: each backend's current numbers and the file heatmap's counts, read from
the engine's roll-ups (``BackendState`` -> ``Snapshot``, ``FileCell``) in two queries, however
long the history. And which files each backend's current run has (the demo checks it)."""

from dataclasses import dataclass

from parity.models import FileCell, Project
from parity.selectors.aligned import Aligned, aligned_backends, aligned_file_counts
from parity.selectors.fragments import (
    BackendParity,
    backend_parities,
    file_counts,
    file_flaky_add,
)


@dataclass(frozen=True)
class FileRow:
    file: str  # a test file, or a folder ("." for the root) when aggregated by folder
    # backend name -> counts of CELL_FIELDS, and ``flaky`` (of its gaps, those that read flaky)
    cells: dict[str, dict[str, int]]


@dataclass(frozen=True)
class ProjectParity:
    project: str
    reference: str | None
    backends: list[BackendParity]
    files: list[FileRow]
    aligned: bool = False


def parity_overview(
    *, project: Project, by_dir: bool = False, aligned: Aligned | None = None, files: bool = True
) -> ProjectParity:
    """Each backend's current numbers and the file cells (none when not ``files``); with
    ``aligned`` (the view ``parity.result_reads.aligned_view`` read with its cells), each
    backend's at the newest commit it and the reference both ran. Each current cell counts its
    flaky gaps too (one more query, for a project that keeps states from history)."""
    backends = backend_parities(project=project)
    names = [b.backend for b in backends]
    counts = (
        file_counts(
            project=project, names=names, by_dir=by_dir, pending=any(b.pending for b in backends)
        )
        if files
        else {}
    )
    if files and aligned is None:
        file_flaky_add(counts, project=project, by_dir=by_dir)
    if aligned is not None:
        backends = aligned_backends(current=backends, view=aligned)
        if files:
            counts = aligned_file_counts(
                project=project, current=counts, view=aligned, by_dir=by_dir
            )
    return ProjectParity(
        project=project.slug,
        reference=next((b.backend for b in backends if b.is_reference), None),
        backends=backends,
        files=[FileRow(file=file, cells=cells) for file, cells in counts.items()],
        aligned=aligned is not None,
    )


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
