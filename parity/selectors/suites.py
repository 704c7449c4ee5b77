"""The suites matrix (``p/<slug>/suites/``, ``api/v1/projects/<slug>/suites/``): one row per
logical suite, one column per backend, each cell the suite's run status there and the health
of its last runs (``parity.pure.suite_runs``), read from the uploads that name a suite and the
project's mirror map (``parity.models.suites``). docs/suites.md.

Per upload, never per result: a suite's run is the uploads of one parity run that name it, with
the counts ingest stored on each upload, and the timed-out files of its run manifest."""

from __future__ import annotations

import datetime
from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count, IntegerField, Q, Sum
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce
from django.utils import timezone

from parity.definitions import may_be_current_since
from parity.models import Backend, Project, RunFile, Suite, Upload, UploadStatus
from parity.models.suites import STALE_AFTER_HOURS
from parity.pure.suite_runs import STATUSES, Cell, SuiteRun, TierRules, cell_of
from parity.selectors.fragments import reference_first

# How far back the matrix reads runs: a suite with no run in this window reads "never ran".
WINDOW_DAYS = 90


@dataclass(frozen=True)
class SuiteCell:
    backend: str
    name: str  # what this backend's CI calls the suite (the map's name, or the row's)
    cell: Cell


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
    *, project: Project, since: datetime.datetime
) -> dict[tuple[int, str], list[SuiteRun]]:
    """(backend id, suite as CI named it) -> its runs since ``since``, newest first: of the
    runs that may be current (the default branch, no probe)."""
    runs = may_be_current_since(project, since)
    grouped = (
        Upload.objects.filter(run__in=runs)
        .exclude(suite="")
        .values("run_id", "suite", "run__backend_id", "run__started_at")
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
    timed_out_rows = (
        RunFile.objects.filter(run__in=runs, timed_out=True, upload__isnull=False)
        .exclude(upload__suite="")
        .values_list("run_id", "upload__suite")
        .annotate(n=Count("id"))
        .order_by()
    )
    timed_out = {(run_id, suite): n for run_id, suite, n in timed_out_rows}
    found: dict[tuple[int, str], list[SuiteRun]] = defaultdict(list)
    for row in grouped:
        found[(row["run__backend_id"], row["suite"])].append(
            SuiteRun(
                run_id=row["run_id"],
                started_at=row["run__started_at"],
                uploads=row["uploads"],
                failed_uploads=row["failed_uploads"],
                pending_uploads=row["pending_uploads"],
                tests=row["tests"],
                failed_tests=row["failed_tests"],
                timed_out_files=timed_out.get((row["run_id"], row["suite"]), 0),
            )
        )
    return found


def suite_matrix(*, project: Project, now: datetime.datetime | None = None) -> SuiteMatrix:
    """Every logical suite of the project (those its mirror map names, and those CI sent that
    the map does not claim) on every backend."""
    now = now or timezone.now()
    backends = reference_first(project, list(project.backends.all()))
    by_id = {b.pk: b for b in backends}
    suites = list(Suite.objects.filter(project=project).prefetch_related("backends"))
    # What CI calls each mapped suite on a backend -> the suite; a family's row holds for its
    # variants (their uploads name the family's jobs).
    claimed: dict[tuple[int, str], Suite] = {}
    entries: dict[tuple[int, int], object] = {}
    for suite in suites:
        for entry in suite.backends.all():
            claimed[(entry.backend_id, entry.name_on_backend)] = suite
            entries[(suite.pk, entry.backend_id)] = entry
    runs = suite_runs(project=project, since=now - datetime.timedelta(days=WINDOW_DAYS))
    logical: dict[tuple[str, int], list[SuiteRun]] = defaultdict(list)
    unmapped: set[str] = set()
    for (backend_id, name), found in runs.items():
        backend = by_id.get(backend_id)
        family_id = backend.family_id if backend is not None else None
        suite = claimed.get((backend_id, name)) or (
            claimed.get((family_id, name)) if family_id else None
        )
        if suite is None and name not in {s.name for s in suites}:
            unmapped.add(name)
        logical[(suite.name if suite else name, backend_id)].extend(found)
    rows = [_row(suite.name, suite, backends, logical, entries, now) for suite in suites] + [
        _row(name, None, backends, logical, entries, now) for name in sorted(unmapped)
    ]
    rows.sort(key=lambda row: row.name.lower())
    return SuiteMatrix(backends=backends, rows=rows, window_days=WINDOW_DAYS)


def _row(name, suite, backends, logical, entries, now) -> SuiteRow:
    stale_after = datetime.timedelta(
        hours=suite.stale_after_hours if suite is not None else STALE_AFTER_HOURS
    )
    rules = (
        TierRules(
            promote_after=suite.promote_after,
            demote_after=suite.demote_after,
            recover_after=suite.recover_after,
        )
        if suite is not None
        else TierRules()
    )
    cells = []
    for backend in backends:
        entry = None
        if suite is not None:
            entry = entries.get((suite.pk, backend.pk)) or (
                entries.get((suite.pk, backend.family_id)) if backend.family_id else None
            )
        found = sorted(
            logical.get((name, backend.pk), []),
            key=lambda r: (r.started_at, r.run_id),
            reverse=True,
        )
        cells.append(
            SuiteCell(
                backend=backend.name,
                name=entry.name_on_backend if entry is not None else name,
                cell=cell_of(
                    found,
                    now=now,
                    stale_after=stale_after,
                    excluded=bool(entry and entry.excluded),
                    reason=entry.reason if entry else "",
                    issue_url=entry.issue_url if entry else "",
                    rules=rules,
                ),
            )
        )
    return SuiteRow(name=name, mapped=suite is not None, cells=cells)
