"""The aligned view's value (``parity.result_reads.aligned`` reads it from two runs' results
per backend) and how the pages fold it into their current numbers: the heatmap's and the
parity endpoint's ``?aligned=1``. No query here: the caller reads the view and passes it in, so
a page that reads raw results says so where it calls ``parity.result_reads``."""

from dataclasses import dataclass
from datetime import datetime

from parity.models import Project
from parity.selectors.fragments import CELL_FIELDS, PENDING, BackendParity, folder_of


@dataclass(frozen=True)
class AlignedPair:
    """The runs a backend is compared at: its own and the reference's, of one commit."""

    backend_id: int
    commit: str
    run: int
    started_at: datetime
    reference_run: int


@dataclass(frozen=True)
class AlignedGap:
    backend: str
    test: str
    test_id: int
    file: str
    state: str
    reason: str | None
    triage: str | None
    tracked: bool
    intended: bool
    commit: str
    run: int


@dataclass(frozen=True)
class AlignedNumbers:
    """A backend's parity at its aligned commit, as ``BackendParity`` counts it."""

    reference_passing: int
    gaps: dict[str, int]  # skipped, failed, error, missing (every absent state)
    tracked: int
    untracked: int
    intended: int
    reference_missing: int
    test_count: int

    @property
    def scored(self) -> int:
        return sum(self.gaps.values())

    @property
    def passing(self) -> int:
        return self.reference_passing - self.scored

    @property
    def score(self) -> float | None:
        if not self.reference_passing:
            return None
        return round(self.passing / self.reference_passing, 4)


@dataclass(frozen=True)
class Aligned:
    names: dict[int, str]  # every backend's name by id
    pairs: dict[int, AlignedPair]  # by backend id
    numbers: dict[int, AlignedNumbers]
    # (backend id, file) -> (passed, failed, error, skipped, missing, gaps, reference passed,
    # reference tests, reference skipped) of the backend's aligned run and the reference's.
    cells: dict[tuple[int, int | str], tuple[int, ...]]
    gaps: list[AlignedGap]


def aligned_backends(*, current: list[BackendParity], view: Aligned) -> list[BackendParity]:
    """``current`` (``fragments.backend_parities``) with every backend but the reference read
    at its aligned commit: a backend with none in common with the reference has no run. No
    query."""
    ids = {name: pk for pk, name in view.names.items()}
    backends = []
    for b in current:
        if b.is_reference:
            backends.append(b)
            continue
        pk = ids[b.backend]
        pair, numbers = view.pairs.get(pk), view.numbers.get(pk)
        if pair is None or numbers is None:
            backends.append(
                BackendParity(
                    backend=b.backend,
                    is_reference=False,
                    definition=b.definition,
                    family=b.family,
                )
            )
            continue
        backends.append(
            BackendParity(
                backend=b.backend,
                is_reference=False,
                run=pair.run,
                commit=pair.commit,
                complete=True,
                started_at=pair.started_at,
                score=numbers.score,
                passing=numbers.passing,
                reference_passing=numbers.reference_passing,
                gaps=numbers.gaps,
                tracked=numbers.tracked,
                untracked=numbers.untracked,
                intended=numbers.intended,
                reference_missing=numbers.reference_missing,
                test_count=numbers.test_count,
                reference_run=pair.reference_run,
                definition=b.definition,
                family=b.family,
            )
        )
    return backends


def aligned_file_counts(
    *, project: Project, current: dict, view: Aligned, by_dir: bool = False
) -> dict[str, dict[str, dict[str, int]]]:
    """``fragments.file_counts``'s shape from the aligned cells: per file (or folder), per
    backend, its CELL_FIELDS, ``gaps`` and the counts of the reference run it was compared
    with (``reference_passed``, ``reference_tests``, ``reference_skipped``). The reference's
    own cells are its current run's (``current``). No query."""
    names = view.names
    reference = names.get(project.reference_backend_id)
    fields = (*CELL_FIELDS, "gaps", "reference_passed", "reference_tests", "reference_skipped")
    totals: dict[str, dict[str, dict[str, int]]] = {}
    for (backend_id, file), counts in view.cells.items():
        row = totals.setdefault(
            folder_of(file) if by_dir else file,
            {n: dict.fromkeys((*CELL_FIELDS, PENDING), 0) for n in names.values()},
        )
        cell = row[names[backend_id]]
        for name, count in zip(fields, counts, strict=True):
            cell[name] = cell.get(name, 0) + count
    for key, row in totals.items():
        if reference is not None and key in current:
            row[reference] = current[key][reference]
    return {key: totals[key] for key in sorted(totals)}
