"""The stored suites matrix: each suite's summary on each backend (``SuiteSummary``), written as
a run of it finishes, so the matrix reads a row per cell instead of replaying 90 days of runs
(docs/suites.md, "Stored, not replayed").

When a suite's run finishes (its uploads ingested, or its run completed), ``suite_run_finish``
records what the CI gate says of its files (``SuiteRunGate``: its green), then applies it to
the summary: a run newer than the summary's newest moves the tier one step by the pure rules
(``parity.pure.suite_runs.tier_step``); an older one, or one whose gate changed, has the cell
replayed from its runs in the window. A move is recorded once (``SuiteTierMove``) and
announced by the ``suite_tier_changed`` webhook. ``suite_summaries_rebuild`` replays a whole
project (the management command ``suite_summaries_rebuild``, a changed suite map, tests)."""

from __future__ import annotations

import datetime
from dataclasses import replace

from django.db import transaction
from django.utils import timezone

from parity.definitions import may_be_current
from parity.models import (
    Backend,
    Project,
    Result,
    Run,
    RunFile,
    SuiteRunGate,
    SuiteSummary,
    SuiteTierMove,
    Upload,
)
from parity.pure.suite_runs import HEALTH_RUNS, SuiteRun, TierRules, TierState, tier_step
from parity.result_reads.verdict import run_verdict
from parity.selectors.suites import (
    WINDOW_DAYS,
    SuiteMap,
    suite_map_read,
    suite_run_as_data,
    suite_runs,
    tier_rules,
)
from parity.services import webhooks


def _since(now: datetime.datetime) -> datetime.datetime:
    return now - datetime.timedelta(days=WINDOW_DAYS)


def _suite_files(run: Run, suite: str) -> list[str] | None:
    """The files of the suite's uploads in ``run`` (their manifest's and their results'); None
    when every upload of the run names the suite: the gate is the whole run's."""
    uploads = list(Upload.objects.filter(run=run).values_list("pk", "suite"))
    ids = [pk for pk, name in uploads if name == suite]
    if len(ids) == len(uploads):
        return None
    listed = RunFile.objects.filter(run=run, upload_id__in=ids).values_list("file", flat=True)
    reported = (
        Result.objects.filter(run=run, upload_id__in=ids)
        .values_list("test__file", flat=True)
        .distinct()
    )
    return sorted({*listed, *reported} - {""})


def _gate_record(run: Run, suite: str, found: SuiteRun) -> SuiteRun:
    """``found`` with what the gate says of its files, recorded. A run that did not run (no
    results) has no verdict to ask: it is red whatever the gate would say."""
    if found.failed_to_run:
        ok, untracked = False, 0
    else:
        verdict = run_verdict(run=run, gaps_limit=0, files=_suite_files(run, suite))
        ok, untracked = verdict.ok, verdict.opened["untracked"]
    SuiteRunGate.objects.update_or_create(
        run=run, suite=suite, defaults={"ok": ok, "untracked": untracked}
    )
    return replace(found, gate_ok=ok)


def suite_run_finish(*, run_id: int, now: datetime.datetime | None = None) -> list[int]:
    """Apply each suite of run ``run_id`` whose uploads are all ingested to its summary on the
    run's backend; the webhook deliveries of the tier moves it made (their ids). A probe or a
    run of another branch is no run of its suites (the matrix reads those that may be
    current)."""
    now = now or timezone.now()
    run = Run.objects.select_related("project", "backend").filter(pk=run_id).first()
    if run is None or not may_be_current(
        probe=run.probe, branch=run.branch, default_branch=run.project.default_branch
    ):
        return []
    found = suite_runs(project=run.project, since=_since(now), run_ids=[run.pk])
    mirror = suite_map_read(project=run.project)
    deliveries = []
    for (_, suite), (this,) in sorted(found.items()):
        if this.pending:
            continue  # the matrix reads it pending; its last upload's finish applies it
        this = _gate_record(run, suite, this)
        rules = tier_rules(mirror.suite_of(run.backend, suite))
        with transaction.atomic():
            moves = _summary_apply(run.project, run.backend, suite, this, rules, now)
            deliveries += webhooks.suite_tier_notices(moves=moves)
    return deliveries


def _summary_apply(
    project: Project,
    backend: Backend,
    suite: str,
    this: SuiteRun,
    rules: TierRules,
    now: datetime.datetime,
) -> list[SuiteTierMove]:
    """One finished run applied to its summary: one step of the tier rules when it is newer
    than every run applied before; the cell replayed otherwise. The moves it made, new ones
    only (a replay records again the moves its earlier steps made: they are kept once)."""
    summary = SuiteSummary.objects.select_for_update().filter(backend=backend, suite=suite).first()
    newer = summary is not None and (this.started_at, this.run_id) > (
        summary.last_started_at,
        summary.last_run_id,
    )
    if not newer:
        if summary is not None and suite_run_as_data(this) in summary.recent:
            return []  # applied before as it is: a redelivery
        runs = suite_runs(project=project, since=_since(now), backend_ids=[backend.pk], suite=suite)
        return _cell_replay(project, backend, suite, runs.get((backend.pk, suite), []), rules)
    before = TierState(summary.tier, summary.greens, summary.reds)
    after = tier_step(before, this.green, rules)
    summary.recent = [suite_run_as_data(this), *summary.recent][:HEALTH_RUNS]
    summary.last_started_at, summary.last_run_id = this.started_at, this.run_id
    summary.tier, summary.greens, summary.reds = after.tier, after.greens, after.reds
    moves = []
    if after.tier != before.tier:
        summary.tier_since = this.started_at
        move, created = SuiteTierMove.objects.get_or_create(
            backend=backend,
            suite=suite,
            run_id=this.run_id,
            defaults={
                "project": project,
                "before": before.tier,
                "after": after.tier,
                "at": this.started_at,
            },
        )
        if created:
            moves.append(move)
    summary.save()
    return moves


def _replayed(
    project: Project, backend_id: int, suite: str, runs: list[SuiteRun], rules: TierRules
) -> tuple[SuiteSummary | None, list[SuiteTierMove]]:
    """The summary ``runs`` (newest first) leave, replayed from the oldest as informing, and
    the moves along the way."""
    finished = [r for r in runs if not r.pending]
    if not finished:
        return None, []
    state, since, moves = TierState(), None, []
    for run in reversed(finished):
        after = tier_step(state, run.green, rules)
        if after.tier != state.tier:
            since = run.started_at
            moves.append(
                SuiteTierMove(
                    project=project,
                    backend_id=backend_id,
                    suite=suite,
                    run_id=run.run_id,
                    before=state.tier,
                    after=after.tier,
                    at=run.started_at,
                )
            )
        state = after
    newest = finished[0]
    summary = SuiteSummary(
        project=project,
        backend_id=backend_id,
        suite=suite,
        last_started_at=newest.started_at,
        last_run_id=newest.run_id,
        recent=[suite_run_as_data(r) for r in finished[:HEALTH_RUNS]],
        tier=state.tier,
        tier_since=since,
        greens=state.greens,
        reds=state.reds,
    )
    return summary, moves


def _cell_replay(
    project: Project, backend: Backend, suite: str, runs: list[SuiteRun], rules: TierRules
) -> list[SuiteTierMove]:
    summary, moves = _replayed(project, backend.pk, suite, runs, rules)
    SuiteSummary.objects.filter(backend=backend, suite=suite).delete()
    if summary is None:
        return []
    summary.save()
    known = set(
        SuiteTierMove.objects.filter(backend=backend, suite=suite).values_list("run_id", flat=True)
    )
    new = [m for m in moves if m.run_id not in known]
    SuiteTierMove.objects.bulk_create(new, ignore_conflicts=True)
    return new


def suite_summaries_rebuild(*, project: Project, now: datetime.datetime | None = None) -> int:
    """Every summary of ``project`` replayed from its runs in the window (its stored gates;
    a run with none reads by its tests), and the moves they made recorded where missing;
    nothing announced (they are history). The summaries written."""
    now = now or timezone.now()
    mirror: SuiteMap = suite_map_read(project=project)
    backends = {b.pk: b for b in project.backends.all()}
    found = suite_runs(project=project, since=_since(now))
    summaries, moves = [], []
    for (backend_id, suite), runs in found.items():
        rules = tier_rules(mirror.suite_of(backends.get(backend_id), suite))
        summary, made = _replayed(project, backend_id, suite, runs, rules)
        if summary is not None:
            summaries.append(summary)
            moves += made
    with transaction.atomic():
        SuiteSummary.objects.filter(project=project).delete()
        SuiteSummary.objects.bulk_create(summaries, batch_size=1000)
        SuiteTierMove.objects.bulk_create(moves, batch_size=1000, ignore_conflicts=True)
    return len(summaries)
