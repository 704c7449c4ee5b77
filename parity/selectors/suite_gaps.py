"""A suite that never ran on a backend, as one row of the gaps lists (docs/suites.md, "A suite
that never ran"): the ``missing`` gaps of its tests there are folded under it instead of listed
one by one. The tests a suite holds are the reference's (``ReferenceSuiteTest``, kept by the
engine); whether it ran on a backend is the suites matrix's cell (``suite_matrix``): never ran,
or excluded by the map with a reason. The gap rows stay as they are (the score counts them);
only the lists group them.

Cost: the matrix reads uploads, never results; the rows join the stored test → suite by the
gap's test. Nothing here reads the reference's results."""

from __future__ import annotations

from dataclasses import dataclass, replace

from django.db.models import Count, Q, QuerySet

from parity.models import Gap, GapState, Project, ReferenceSuiteTest
from parity.pure.suite_runs import EXCLUDED, NEVER_RAN, STATUS_LABELS
from parity.selectors.gaps import GapsQuery, gaps_list
from parity.selectors.suite_names import suites_by_reference_name
from parity.selectors.suites import suite_matrix

# The cells whose tests' ``missing`` gaps fold: the backend never ran the suite, or the map says
# it does not.
FOLDED_STATUSES = (NEVER_RAN, EXCLUDED)


@dataclass(frozen=True)
class UnrunSuite:
    """A suite the reference runs and a backend never ran (or excludes), with its ``missing``
    gaps there under the list's filters (``missing``)."""

    suite: str  # the logical suite (the matrix's row)
    backend: str
    backend_id: int
    status: str  # never_ran or excluded
    on_reference: str  # what the reference's CI calls it: the name its tests are stored under
    reason: str = ""  # an exclusion's
    issue_url: str = ""
    missing: int = 0

    @property
    def label(self) -> str:
        return STATUS_LABELS[self.status]

    @property
    def fold_q(self) -> Q:
        """Its gaps: the backend's ``missing`` gaps of the tests the reference runs in it."""
        return Q(
            backend_id=self.backend_id,
            state=GapState.MISSING,
            test__reference_suite__suite=self.on_reference,
        )


def suites_unrun(*, project: Project) -> list[UnrunSuite]:
    """Each (suite, backend) cell of the suites matrix that never ran or is excluded, for a
    suite the reference's current run has tests of; by suite, then backend. One query for a
    project whose reference names no suite; the matrix's few more otherwise (per upload)."""
    stored = set(
        ReferenceSuiteTest.objects.filter(project=project)
        .values_list("suite", flat=True)
        .distinct()
        .order_by()
    )
    if not stored:
        return []
    matrix = suite_matrix(project=project)
    reference = project.reference_backend_id
    found = []
    for row in matrix.rows:
        cells = dict(zip((b.pk for b in matrix.backends), row.cells, strict=True))
        on_reference = cells[reference].name if reference in cells else row.name
        if on_reference not in stored:
            continue
        for backend in matrix.backends:
            cell = cells[backend.pk]
            if backend.pk == reference or cell.cell.status not in FOLDED_STATUSES:
                continue
            found.append(
                UnrunSuite(
                    suite=row.name,
                    backend=backend.name,
                    backend_id=backend.pk,
                    status=cell.cell.status,
                    on_reference=on_reference,
                    reason=cell.cell.reason,
                    issue_url=cell.cell.issue_url,
                )
            )
    return found


def folded_q(unrun: list[UnrunSuite]) -> Q | None:
    """The gaps ``unrun`` fold (None: none)."""
    q = None
    for each in unrun:
        q = each.fold_q if q is None else q | each.fold_q
    return q


def suites_unrun_counted(unrun: list[UnrunSuite], gaps: QuerySet[Gap]) -> list[UnrunSuite]:
    """``unrun`` with how many of ``gaps`` (a list's, before folding) each folds; a cell with
    none left under the list's filters drops out. One query."""
    q = folded_q(unrun)
    if q is None:
        return []
    rows = (
        gaps.filter(q)
        .order_by()
        .values_list("backend_id", "test__reference_suite__suite")
        .annotate(n=Count("pk"))
    )
    counts = {(backend, suite): n for backend, suite, n in rows}
    counted = [replace(u, missing=counts.get((u.backend_id, u.on_reference), 0)) for u in unrun]
    return [u for u in counted if u.missing]


def gaps_folded(*, project: Project, query: GapsQuery) -> tuple[GapsQuery, list[UnrunSuite]]:
    """``query`` folding the ``missing`` gaps of the suites never run (or excluded) on their
    backend, and those suites, each with its gaps under ``query``'s filters of any age. An open
    list folds; one asking for a suite by name (``suite=``), for fixed gaps, for another state
    or for tests declared not applicable lists its gaps one by one, as asked."""
    if (
        query.suite
        or query.closed_since is not None
        or query.state not in (None, GapState.MISSING)
        or query.not_applicable is True
    ):
        return query, []
    unrun = suites_unrun(project=project)
    if query.backend:
        unrun = [u for u in unrun if u.backend == query.backend]
    if not unrun:
        return query, []
    every = gaps_list(project=project, query=replace(query, since=None))
    counted = suites_unrun_counted(unrun, every)
    return replace(query, folded=tuple(counted)), counted


def gaps_suite_attach(gaps: list[Gap], *, project: Project) -> None:
    """Each of ``gaps`` (read by ``gaps_list``, with its test's suite) gets ``suite``: the
    logical suite the reference runs its test in, or ""."""
    names = None
    for gap in gaps:
        found = getattr(gap.test, "reference_suite", None)
        if found is None:
            gap.suite = ""
            continue
        if names is None:  # a query only for a page with a suite
            names = suites_by_reference_name(project=project)
        gap.suite = names.get(found.suite, found.suite)
