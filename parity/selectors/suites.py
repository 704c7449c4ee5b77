"""The suites matrix (``p/<slug>/suites/``, ``api/v1/projects/<slug>/suites/``): one row per
logical suite, one column per backend, each cell the suite's run status there and the health
of its last runs (``parity.pure.suite_runs``), read from the stored summary of each suite on
each backend (``SuiteSummary``, written as its runs finish: ``parity.services.suite_summaries``)
and the project's mirror map (``parity.models.suites``). docs/suites.md.

Per upload, never per result: a suite's run is the uploads of one parity run that name it, with
the counts ingest stored on each upload, and the timed-out files of its run manifest
(``suite_runs``, what the summaries are written and rebuilt from)."""

from __future__ import annotations

import datetime
from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count, IntegerField, Prefetch, Q, Sum
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce
from django.utils import timezone

from parity.definitions import may_be_current_since
from parity.models import (
    Backend,
    Project,
    Run,
    RunFile,
    Suite,
    SuiteBackend,
    SuiteRunGate,
    SuiteSummary,
    Upload,
    UploadStatus,
)
from parity.models.suites import STALE_AFTER_HOURS
from parity.pure.suite_runs import BLOCKING, INFORMING, STATUSES, Cell, SuiteRun, TierRules, cell_of
from parity.selectors.fragments import reference_first

# How far back the matrix reads runs: a suite with no run in this window reads "never ran".
WINDOW_DAYS = 90


@dataclass(frozen=True)
class SuiteCell:
    backend: str
    name: str  # what this backend's CI calls the suite (the map's name, or the row's)
    cell: Cell
    equivalent: str = ""  # the backend the map compares this one's runs with (docs/suites.md)


@dataclass(frozen=True)
class SuiteRow:
    name: str  # the logical suite
    mapped: bool  # the project's mirror map names it (else: a name CI sent, unmapped)
    cells: list[SuiteCell]  # in the columns' order

    @property
    def statuses(self) -> dict[str, int]:
        counts = dict.fromkeys(STATUSES, 0)
        for each in self.cells:
            counts[each.cell.status] += 1
        return counts


@dataclass(frozen=True)
class SuiteMatrix:
    backends: list[Backend]  # the columns
    rows: list[SuiteRow]
    window_days: int

    @property
    def statuses(self) -> dict[str, int]:
        """How many cells have each status, over the whole matrix."""
        counts = dict.fromkeys(STATUSES, 0)
        for row in self.rows:
            for status, count in row.statuses.items():
                counts[status] += count
        return counts


def _int_sum(key: str):
    return Coalesce(Sum(Cast(KT(f"counts__{key}"), IntegerField())), 0)


def suite_runs(
    *,
    project: Project,
    since: datetime.datetime,
    run_ids: list[int] | None = None,
    backend_ids: list[int] | None = None,
    suite: str | None = None,
) -> dict[tuple[int, str], list[SuiteRun]]:
    """(backend id, suite as CI named it) -> its runs since ``since``, newest first: of the
    runs that may be current (the default branch, no probe); only ``run_ids``, ``backend_ids``
    or the suite named ``suite`` when given. Each with what its gate said, where recorded."""
    runs = may_be_current_since(project, since)
    if run_ids is not None:
        runs = runs.filter(pk__in=run_ids)
    if backend_ids is not None:
        runs = runs.filter(backend_id__in=backend_ids)
    uploads = Upload.objects.filter(run__in=runs).exclude(suite="")
    files = RunFile.objects.filter(run__in=runs, timed_out=True, upload__isnull=False).exclude(
        upload__suite=""
    )
    gates = SuiteRunGate.objects.filter(run__in=runs)
    if suite is not None:
        uploads, files = uploads.filter(suite=suite), files.filter(upload__suite=suite)
        gates = gates.filter(suite=suite)
    grouped = (
        uploads.values("run_id", "suite", "run__backend_id", "run__started_at")
        .annotate(
            uploads=Count("id"),
            failed_uploads=Count("id", filter=Q(status=UploadStatus.FAILED)),
            pending_uploads=Count(
                "id", filter=Q(status__in=(UploadStatus.QUEUED, UploadStatus.PROCESSING))
            ),
            tests=_int_sum("total"),
            failed_tests=_int_sum("failed") + _int_sum("error"),
        )
        .order_by("run__backend_id", "suite", "-run__started_at", "-run_id")
    )
    timed_out_rows = files.values_list("run_id", "upload__suite").annotate(n=Count("id")).order_by()
    timed_out = {(run_id, name): n for run_id, name, n in timed_out_rows}
    gate_ok = dict(
        ((run_id, name), ok) for run_id, name, ok in gates.values_list("run_id", "suite", "ok")
    )
    found: dict[tuple[int, str], list[SuiteRun]] = defaultdict(list)
    for row in grouped:
        key = (row["run_id"], row["suite"])
        found[(row["run__backend_id"], row["suite"])].append(
            SuiteRun(
                run_id=row["run_id"],
                started_at=row["run__started_at"],
                uploads=row["uploads"],
                failed_uploads=row["failed_uploads"],
                pending_uploads=row["pending_uploads"],
                tests=row["tests"],
                failed_tests=row["failed_tests"],
                timed_out_files=timed_out.get(key, 0),
                gate_ok=gate_ok.get(key),
            )
        )
    return found


def suite_pending_runs(
    *, project: Project, since: datetime.datetime
) -> dict[tuple[int, str], SuiteRun]:
    """(backend id, suite as CI named it) -> its newest run with an upload not yet ingested:
    what the stored summary (finished runs only) cannot say. Few rows: the queue's."""
    runs = may_be_current_since(project, since)
    rows = (
        Upload.objects.filter(
            run__in=runs, status__in=(UploadStatus.QUEUED, UploadStatus.PROCESSING)
        )
        .exclude(suite="")
        .values("run_id", "suite", "run__backend_id", "run__started_at")
        .annotate(uploads=Count("id"))
        .order_by("run__backend_id", "suite", "-run__started_at", "-run_id")
    )
    pending: dict[tuple[int, str], SuiteRun] = {}
    for row in rows:
        pending.setdefault(
            (row["run__backend_id"], row["suite"]),
            SuiteRun(
                run_id=row["run_id"],
                started_at=row["run__started_at"],
                uploads=row["uploads"],
                failed_uploads=0,
                pending_uploads=row["uploads"],
                tests=0,
                failed_tests=0,
                timed_out_files=0,
            ),
        )
    return pending


def suite_run_as_data(run: SuiteRun) -> dict:
    """A finished run as ``SuiteSummary.recent`` stores it (JSON)."""
    return {
        "run_id": run.run_id,
        "started_at": run.started_at.isoformat(),
        "uploads": run.uploads,
        "failed_uploads": run.failed_uploads,
        "tests": run.tests,
        "failed_tests": run.failed_tests,
        "timed_out_files": run.timed_out_files,
        "gate_ok": run.gate_ok,
    }


def suite_run_of_data(data: dict) -> SuiteRun:
    return SuiteRun(
        run_id=data["run_id"],
        started_at=datetime.datetime.fromisoformat(data["started_at"]),
        uploads=data["uploads"],
        failed_uploads=data["failed_uploads"],
        pending_uploads=0,
        tests=data["tests"],
        failed_tests=data["failed_tests"],
        timed_out_files=data["timed_out_files"],
        gate_ok=data["gate_ok"],
    )


@dataclass(frozen=True)
class SuiteMap:
    """The project's mirror map, read once: which logical suite a backend's CI name is."""

    suites: list[Suite]
    claimed: dict[tuple[int, str], Suite]  # (backend id, CI name) -> its suite
    entries: dict[tuple[int, int], SuiteBackend]  # (suite id, backend id) -> its map row

    def suite_of(self, backend: Backend | None, name: str) -> Suite | None:
        """The mapped suite CI's ``name`` on ``backend`` is: its own row's, its family's (a
        family's row holds for its variants), or the suite of that name."""
        if backend is not None:
            found = self.claimed.get((backend.pk, name)) or (
                self.claimed.get((backend.family_id, name)) if backend.family_id else None
            )
            if found is not None:
                return found
        return next((s for s in self.suites if s.name == name), None)

    def entry(self, suite: Suite, backend: Backend) -> SuiteBackend | None:
        return self.entries.get((suite.pk, backend.pk)) or (
            self.entries.get((suite.pk, backend.family_id)) if backend.family_id else None
        )


def suite_map_read(*, project: Project) -> SuiteMap:
    suites = list(
        Suite.objects.filter(project=project).prefetch_related(
            Prefetch("backends", queryset=SuiteBackend.objects.select_related("equivalent"))
        )
    )
    claimed: dict[tuple[int, str], Suite] = {}
    entries: dict[tuple[int, int], SuiteBackend] = {}
    for suite in suites:
        for entry in suite.backends.all():
            claimed[(entry.backend_id, entry.name_on_backend)] = suite
            entries[(suite.pk, entry.backend_id)] = entry
    return SuiteMap(suites=suites, claimed=claimed, entries=entries)


def tier_rules(suite: Suite | None) -> TierRules:
    if suite is None:
        return TierRules()
    return TierRules(
        promote_after=suite.promote_after,
        demote_after=suite.demote_after,
        recover_after=suite.recover_after,
    )


@dataclass(frozen=True)
class SuiteTier:
    name: str  # as CI named it
    tier: str


@dataclass(frozen=True)
class RunSuiteTiers:
    suites: list[SuiteTier]
    gates: bool  # a suite of it is blocking on its backend, or an upload of it names none


def run_suite_tiers(*, run: Run) -> RunSuiteTiers:
    """The suites ``run``'s uploads name, each with its stored tier on the run's backend
    (informing before its first finished run, as a suite starts), and whether its verdict
    gates CI: one of them is blocking, or is not in the project's suite map, or one of its
    uploads names no suite. Tiers gate only the suites a project mapped: the client names a
    suite from CI's own variables (``GITHUB_JOB``...), and a project that never set tier rules
    must keep the gate it had."""
    names = set(
        Upload.objects.filter(run=run).order_by().values_list("suite", flat=True).distinct()
    )
    named = sorted(names - {""})
    if not named:
        return RunSuiteTiers(suites=[], gates=True)
    stored = dict(
        SuiteSummary.objects.filter(backend_id=run.backend_id, suite__in=named).values_list(
            "suite", "tier"
        )
    )
    mirror = suite_map_read(project=run.project)
    suites = [SuiteTier(name=n, tier=stored.get(n, INFORMING)) for n in named]
    unmapped = any(mirror.suite_of(run.backend, n) is None for n in named)
    return RunSuiteTiers(
        suites=suites,
        gates="" in names or unmapped or any(s.tier == BLOCKING for s in suites),
    )


def suite_matrix(*, project: Project, now: datetime.datetime | None = None) -> SuiteMatrix:
    """Every logical suite of the project (those its mirror map names, and those CI sent that
    the map does not claim) on every backend, from the stored summaries
    (``parity.models.SuiteSummary``) and the runs still pending."""
    now = now or timezone.now()
    since = now - datetime.timedelta(days=WINDOW_DAYS)
    backends = reference_first(project, list(project.backends.all()))
    by_id = {b.pk: b for b in backends}
    mirror = suite_map_read(project=project)
    names = {s.name for s in mirror.suites}
    # (logical suite, backend id) -> (its stored summary, its newest pending run)
    logical: dict[tuple[str, int], list] = {}
    unmapped: set[str] = set()
    stored = SuiteSummary.objects.filter(project=project, last_started_at__gte=since)
    pending = suite_pending_runs(project=project, since=since)
    summaries = {(s.backend_id, s.suite): s for s in stored}
    for backend_id, name in {*summaries, *pending}:
        backend = by_id.get(backend_id)
        suite = mirror.suite_of(backend, name)
        if suite is None and name not in names:
            unmapped.add(name)
        summary, waiting = summaries.get((backend_id, name)), pending.get((backend_id, name))
        slot = logical.setdefault((suite.name if suite else name, backend_id), [None, None])
        # Two CI names of one logical suite on a backend: the newer run's says.
        if summary is not None and (
            slot[0] is None or summary.last_started_at > slot[0].last_started_at
        ):
            slot[0] = summary
        if waiting is not None and (slot[1] is None or waiting.started_at > slot[1].started_at):
            slot[1] = waiting
    rows = [_row(suite.name, suite, backends, logical, mirror, now) for suite in mirror.suites]
    rows += [_row(name, None, backends, logical, mirror, now) for name in sorted(unmapped)]
    rows.sort(key=lambda row: row.name.lower())
    return SuiteMatrix(backends=backends, rows=rows, window_days=WINDOW_DAYS)


def _row(name, suite, backends, logical, mirror, now) -> SuiteRow:
    stale_after = datetime.timedelta(
        hours=suite.stale_after_hours if suite is not None else STALE_AFTER_HOURS
    )
    cells = []
    for backend in backends:
        entry = mirror.entry(suite, backend) if suite is not None else None
        summary, waiting = logical.get((name, backend.pk), (None, None))
        runs = [suite_run_of_data(d) for d in summary.recent] if summary is not None else []
        if waiting is not None and (not runs or waiting.started_at >= runs[0].started_at):
            runs.insert(0, waiting)
        equivalent = entry.equivalent if entry is not None else None
        cells.append(
            SuiteCell(
                backend=backend.name,
                name=entry.name_on_backend if entry is not None else name,
                cell=cell_of(
                    runs,
                    now=now,
                    stale_after=stale_after,
                    excluded=bool(entry and entry.excluded),
                    reason=entry.reason if entry else "",
                    issue_url=entry.issue_url if entry else "",
                    tier=summary.tier if summary is not None else INFORMING,
                ),
                equivalent=equivalent.name if equivalent is not None else "",
            )
        )
    return SuiteRow(name=name, mapped=suite is not None, cells=cells)
