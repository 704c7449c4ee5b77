"""Runs and uploads, newest first, a page at a time: what CI sent, whether it was ingested,
which run is each backend's current one, and which complete runs dropped coverage against the
run before them (the verdict's baseline: ``verdict.baseline_run_pick``), by the verdict's rule
(``coverage_dropped``: a crashed shard is a rerun, not lost coverage)."""

from collections import Counter
from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import Count, Exists, OuterRef, Q, Subquery

from parity.definitions import (
    coverage_dropped,
    current_runs,
    is_infra,
    started_before_q,
    untracked_q,
)
from parity.models import (
    BackendState,
    Gap,
    GapState,
    Project,
    Run,
    RunFile,
    RunFileState,
    Snapshot,
    Transition,
    Upload,
    UploadStatus,
)
from parity.selectors.fragments import sort_order

COUNT_FIELDS = ("total", "passed", "skipped", "failed", "error")
# ``?sort=`` columns (``fragments.sort_order``).
RUN_SORTS = {
    "ran": ("started_at", "pk"),
    "backend": ("backend__name", "-started_at", "-pk"),
    "commit": ("commit", "-started_at", "-pk"),
}


@dataclass(frozen=True)
class RunVerdict:
    """What a run changed, as the engine stored it when the run was current (its ``Gap`` rows
    name the runs that opened and closed them): a run never current (a pull request's, a
    probe, one superseded before its recompute) is judged on its own page only."""

    judged: bool = False  # it was current once: its gaps were opened and closed
    opened: int = 0  # gaps it opened (not ``reference_missing``: outside the score)
    untracked: int = 0  # of those, still open and neither tracked nor intended
    closed: int = 0  # gaps it closed
    # Files its run manifest lists as not run normally, by state (crashed, timed_out...).
    unrun: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class RunRow:
    run: Run
    uploads: list[Upload]  # oldest first
    is_current: bool
    counts: dict[str, int]  # summed over the run's ingested uploads
    baseline_total: int | None = None  # the tests of the run before it, by the same sum
    # Complete, with too few tests against its baseline: the engine's snapshot says, for a run
    # once current; the uploads' counts, for one never current (``_unjudged_drop``).
    coverage_drop: bool = False
    verdict: RunVerdict = RunVerdict()

    @property
    def failed_uploads(self) -> int:
        return sum(u.status == UploadStatus.FAILED for u in self.uploads)

    @property
    def pending_uploads(self) -> int:
        return sum(u.status in (UploadStatus.QUEUED, UploadStatus.PROCESSING) for u in self.uploads)


@dataclass(frozen=True)
class RunsPage:
    rows: list[RunRow]
    page: int
    has_next: bool
    sort: str = "-ran"  # in force


def runs_page(
    *,
    project: Project,
    backend: str | None = None,
    page: int = 1,
    per_page: int = 25,
    sort: str = "",
) -> RunsPage:
    """One page of runs, each with its verdict (``RunVerdict``). No total count: the page
    fetches one row more to know if another page follows, so its cost does not depend on the
    length of history. Eight queries: the page's run ids, those runs (each with its baseline's
    id and whether it was ever current), uploads, current runs, the baselines' uploads, the
    page's gaps opened, closed, and unrun files (each by an index on the run)."""
    page = max(page, 1)
    sort, order = sort_order(sort, RUN_SORTS, "-ran")
    if sort.removeprefix("-") == "ran":
        # Both ways along ``run_project_started`` (started_at is never null: no NULLS LAST).
        order = ["-started_at", "-pk"] if sort.startswith("-") else ["started_at", "pk"]
    ids = _page_ids(project, backend, order, offset=(page - 1) * per_page, limit=per_page + 1)
    judged = Snapshot.objects.filter(backend_id=OuterRef("backend_id"), run_id=OuterRef("pk"))
    by_id = (
        Run.objects.filter(pk__in=ids)
        .select_related("backend")
        .annotate(
            baseline_id=_baseline_id(project),
            judged=Exists(judged),
            judged_drop=Subquery(judged.values("coverage_drop")[:1]),
            # The version transition it made, if any: its badge links the report.
            transition_id=Subquery(
                Transition.objects.filter(to_run_id=OuterRef("pk")).values("pk")[:1]
            ),
        )
        .prefetch_related("uploads")
        .in_bulk()
    )
    found = [by_id[pk] for pk in ids]
    current = set(
        BackendState.objects.filter(project=project).values_list("current_run_id", flat=True)
    )
    has_next, found = len(found) > per_page, found[:per_page]
    totals = _baseline_totals({run.baseline_id for run in found if run.complete} - {None})
    verdicts = run_verdicts(runs=found)
    rows = [_row(run, current, totals.get(run.baseline_id), verdicts[run.pk]) for run in found]
    return RunsPage(rows=rows, page=page, has_next=has_next, sort=sort)


def _page_ids(
    project: Project, backend: str | None, order: list, *, offset: int, limit: int
) -> list[int]:
    """The page's run ids alone: the rows an offset skips cost an index entry each, not a
    baseline's lookup (``run_project_started``, ``run_backend_started``)."""
    runs = Run.objects.filter(project=project)
    if backend:
        runs = runs.filter(backend__name=backend)
    return list(runs.order_by(*order).values_list("pk", flat=True)[offset : offset + limit])


def run_verdicts(*, runs: list[Run]) -> dict[int, RunVerdict]:
    """Each run's ``RunVerdict`` (``runs`` annotated with ``judged``), from its gaps and run
    manifest. Three grouped queries, sized by the gaps those runs opened and closed."""
    ids = [run.pk for run in runs]
    opened = (
        Gap.objects.filter(opened_run_id__in=ids)
        .exclude(state=GapState.REFERENCE_MISSING)
        .values_list("opened_run_id")
        .annotate(
            n=Count("pk"),
            untracked=Count("pk", filter=Q(is_open=True) & untracked_q()),
        )
        .order_by()
    )
    counts = {run_id: (n, untracked) for run_id, n, untracked in opened}
    closed = dict(
        Gap.objects.filter(closed_run_id__in=ids)
        .exclude(state=GapState.REFERENCE_MISSING)
        .values_list("closed_run_id")
        .annotate(n=Count("pk"))
        .order_by()
    )
    unrun: dict[int, dict[str, int]] = {}
    files = (
        RunFile.objects.filter(run_id__in=ids)
        .exclude(state=RunFileState.RAN)
        .values_list("run_id", "state")
        .annotate(n=Count("pk"))
        .order_by()
    )
    for run_id, state, n in files:
        unrun.setdefault(run_id, {})[state] = n
    return {
        run.pk: RunVerdict(
            judged=run.judged,
            opened=counts.get(run.pk, (0, 0))[0],
            untracked=counts.get(run.pk, (0, 0))[1],
            closed=closed.get(run.pk, 0),
            unrun=unrun.get(run.pk, {}),
        )
        for run in runs
    }


def _baseline_id(project: Project) -> Subquery:
    """Each run's baseline: its backend's latest complete default-branch run CI ran before it.
    The (backend, branch, -started_at) index finds it."""
    baselines = (
        current_runs(project)
        # started_at__lte repeats ``started_before_q`` so the index seeks to the run, not scans
        # from the newest (a page of runs from a year ago walked every run since).
        .filter(
            started_before_q(OuterRef("started_at"), OuterRef("pk")),
            started_at__lte=OuterRef("started_at"),
        )
        .filter(backend_id=OuterRef("backend_id"))
        .values("pk")[:1]
    )
    return Subquery(baselines)


def _baseline_totals(run_ids: set[int]) -> dict[int, int]:
    totals: Counter = Counter()
    uploads = Upload.objects.filter(run_id__in=run_ids, status=UploadStatus.DONE)
    for run_id, counts in uploads.values_list("run_id", "counts"):
        totals[run_id] += counts.get("total", 0)
    return totals


def _row(run: Run, current: set[int], baseline_total: int | None, verdict: RunVerdict) -> RunRow:
    uploads = sorted(run.uploads.all(), key=lambda u: (u.created_at, u.pk))
    counts: Counter = Counter()
    for upload in uploads:
        if upload.status == UploadStatus.DONE:
            counts.update({k: upload.counts.get(k, 0) for k in COUNT_FIELDS})
    # A run once current was judged by the engine, against the run it replaced (its
    # snapshot's, ``coverage_dropped`` with the tests infrastructure lost left out).
    drop = run.judged_drop
    if drop is None:
        drop = _unjudged_drop(run, counts, baseline_total, verdict)
    return RunRow(
        run=run,
        uploads=uploads,
        is_current=run.pk in current,
        counts={k: counts[k] for k in COUNT_FIELDS},
        baseline_total=baseline_total,
        coverage_drop=drop,
        verdict=verdict,
    )


def _unjudged_drop(
    run: Run, counts: Counter, baseline_total: int | None, verdict: RunVerdict
) -> bool:
    """``coverage_dropped`` of a run never current (a pull request's, a probe), from its
    uploads' counts. Which of its baseline's tests it lacks in files infrastructure lost takes
    raw results (its page's verdict reads them): a run with such files is not flagged here,
    as a crashed shard is a rerun, not lost coverage."""
    if not run.complete or any(is_infra(state) for state in verdict.unrun):
        return False
    return coverage_dropped(
        previous=baseline_total,
        current=counts["total"],
        infra_lacking=0,
        percent=settings.PARITY_COVERAGE_DROP_PERCENT,
    )
