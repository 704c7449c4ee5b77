"""One test on every backend: its outcomes over the backend's last runs with its current
outcome and open gap (the test endpoint's ``testcase_history``, and the test page's
``testcase_page`` with reasons, issues and triage too). Both read the test's results in each
backend's last runs by the results' (run, test) index, at most ``HISTORY_RUNS`` runs per
backend, in one statement."""

import datetime
from dataclasses import dataclass

from django.db.models import prefetch_related_objects
from psycopg2 import sql

from parity.definitions import (
    OUTCOME_PARAMS,
    HistoryStanding,
    Standing,
    gap_standing,
    history_standings,
    on_default_branch_sql,
    outcome_first,
)
from parity.models import CurrentOutcome, Gap, Outcome, Project, Reason, Result, Run, TestCase
from parity.models.sql import model_sql
from parity.pure.reproduce import reproduce_command
from parity.read_replica import read_cursor
from parity.selectors.families import AlsoFailing, also_failing, families_from, gap_scored
from parity.selectors.fragments import (
    TestCell,
    backend_names,
    gap_info,
    pending_pairs,
    reason_infos,
    reference_first,
)
from parity.selectors.gaps import UNRUN_STATES
from parity.selectors.owners import files_owners
from parity.selectors.run_files import UnrunFile, unrun_files

HISTORY_RUNS = 30  # per backend, newest first
# The runs of a backend probed for the test, newest first: a backend that has not run the test
# for a long while (its file left out there, the test renamed or deleted) would otherwise have
# every run of its history probed, however long, to find none.
HISTORY_PROBES = 10 * HISTORY_RUNS


@dataclass(frozen=True)
class RunOutcome:
    run: int
    commit: str
    branch: str
    started_at: datetime.datetime
    complete: bool
    outcome: str
    reason: str | None
    flaky: bool  # rerun in an upload with differing outcomes


# Per backend, its runs newest first, each probed for the test through the results' (run, test)
# index until HISTORY_RUNS of them had it: a test in most runs costs about HISTORY_RUNS probes a
# backend however long the history is. The runs are sorted in a subquery first: otherwise the
# planner probes every run of the backend and sorts after (bench/README.md has the figures).
# Runs whose results retention deleted are not probed, nor any but the backend's last
# HISTORY_PROBES runs. With ``missing``, a complete run of the
# default branch without the test counts too, with no outcome: the test did not run there.
_HISTORY_SQL = """
    SELECT b.id, h.run_id, h.commit, h.branch, h.started_at, h.complete, h.outcome, reason.text,
           h.flaky
    FROM unnest(%(backends)s::bigint[]) AS b(id)
    CROSS JOIN LATERAL (
        SELECT run.id AS run_id, run.commit, run.branch, run.started_at, run.complete,
               o.outcome, o.reason_id, o.flaky
        FROM (
            SELECT id, commit, branch, started_at, complete FROM {run}
            WHERE backend_id = b.id AND results_expired_at IS NULL
            ORDER BY started_at DESC, id DESC
            LIMIT %(probes)s
        ) run
        {join} LATERAL (
            SELECT r.outcome, r.reason_id, r.flaky FROM {result} r
            WHERE r.run_id = run.id AND r.test_id = %(test)s
            ORDER BY {first}
            LIMIT 1
        ) o {on}
        ORDER BY run.started_at DESC, run.id DESC
        LIMIT %(limit)s
    ) h
    LEFT JOIN {reason} reason ON reason.id = h.reason_id
    ORDER BY b.id, h.started_at DESC, h.run_id DESC
    """


def _history_sql(*, missing: bool) -> sql.Composed:
    return model_sql(
        _HISTORY_SQL,
        result=Result,
        run=Run,
        reason=Reason,
        first=outcome_first("r"),
        join=sql.SQL("LEFT JOIN" if missing else "CROSS JOIN"),
        on=sql.SQL("ON true WHERE o.outcome IS NOT NULL OR (run.complete AND {branch})").format(
            branch=on_default_branch_sql("run", sql.Placeholder("branch"))
        )
        if missing
        else sql.SQL(""),
    )


_HISTORY = _history_sql(missing=False)
_TIMELINE = _history_sql(missing=True)
MISSING = "missing"  # a timeline's outcome in a complete run that did not have the test


def _history(
    test: TestCase, backend_ids: list[int], *, missing_in_branch: str | None = None
) -> dict[int, list[RunOutcome]]:
    """Per backend, the test's outcome in each of its last runs (at most ``HISTORY_RUNS`` of its
    last ``HISTORY_PROBES``), newest first. One query.
    With ``missing_in_branch`` (the default branch), the complete runs of that branch without
    the test are there too, as ``MISSING``, for a backend that had the test in one of them."""
    history: dict[int, list[RunOutcome]] = {pk: [] for pk in backend_ids}
    params = {
        **OUTCOME_PARAMS,
        "test": test.pk,
        "backends": backend_ids,
        "limit": HISTORY_RUNS,
        "probes": HISTORY_PROBES,
    }
    with read_cursor() as cursor:
        if missing_in_branch is None:
            cursor.execute(_HISTORY, params)
        else:
            cursor.execute(_TIMELINE, {**params, "branch": missing_in_branch})
        rows = cursor.fetchall()
    for backend_id, run_id, commit, branch, started_at, complete, outcome, reason, flaky in rows:
        history[backend_id].append(
            RunOutcome(
                run=run_id,
                commit=commit,
                branch=branch,
                started_at=started_at,
                complete=complete,
                outcome=MISSING if outcome is None else Outcome(outcome).label,
                reason=reason,
                flaky=bool(flaky),
            )
        )
    # A backend that never had the test in those runs: nothing to tell apart ("missing from its
    # runs").
    return {
        pk: runs if any(run.outcome != MISSING for run in runs) else []
        for pk, runs in history.items()
    }


# --- The test endpoint ------------------------------------------------------------------------


@dataclass(frozen=True)
class BackendHistory:
    outcome: str | None  # in the current run; None when the test is not in it
    reason: str | None
    # The open gap's state when it is a gap of the backend's (``Standing.is_gap``): a test
    # declared not applicable, or whose file infrastructure lost, has none.
    gap: str | None
    history: list[RunOutcome]  # newest first
    standing: Standing = Standing("")  # where the test stands there (``definitions.standing``)
    # Its state from history there (flaky or broken; None: neither, or none kept).
    history_state: HistoryStanding | None = None


@dataclass(frozen=True)
class TestCaseHistory:
    __test__ = False  # not a pytest test class

    id: int
    test: str
    file: str
    backends: dict[str, BackendHistory]  # by name


def testcase_history(*, project: Project, test: TestCase) -> TestCaseHistory:
    """Four queries: backends, history, current outcomes (with reasons), open gaps (with
    triages); a fifth for the backends it is pending on when it can be pending somewhere, one
    for its states from history when the project keeps them."""
    names = backend_names(project)
    history = _history(test, list(names))
    current = {
        c.backend_id: c for c in CurrentOutcome.objects.filter(test=test).select_related("reason")
    }
    gaps = {
        g.backend_id: g
        for g in Gap.objects.filter(test=test, is_open=True).select_related("triage")
    }
    pending = _pending_backends(project, test, names, current, gaps)
    states = history_standings(project=project, test_ids=[test.pk])
    backends = {}
    for pk, name in sorted(names.items(), key=lambda item: item[1]):
        now = current.get(pk)
        outcome = Outcome(now.outcome).label if now else None
        standing = gap_standing(gaps.get(pk), outcome=outcome, pending=pk in pending)
        backends[name] = BackendHistory(
            outcome=outcome,
            reason=now.reason.text if now and now.reason else None,
            gap=standing.outcome if standing.is_gap else None,
            history=history[pk],
            standing=standing,
            history_state=states.get((pk, test.pk)),
        )
    return TestCaseHistory(id=test.pk, test=test.key, file=test.file, backends=backends)


# --- The test page ----------------------------------------------------------------------------


@dataclass(frozen=True)
class BackendLine(TestCell):
    """The test on one backend: its current cell, how it went in the last runs, and the
    command that runs it there."""

    is_reference: bool
    timeline: list[RunOutcome]  # the last runs, oldest first
    reproduce: str  # "" when the backend has no command template
    # How the test's file ended on the backend when its gap is crashed, timed_out, empty or
    # not_run (its run manifest says so); None otherwise.
    unrun: UnrunFile | None = None
    # With a gap: the other backends failing the test, its family's variants first.
    also_failing: AlsoFailing | None = None
    # Its state from history there (flaky or broken; None: neither, or none kept).
    history: HistoryStanding | None = None


@dataclass(frozen=True)
class TestCasePage:
    __test__ = False  # not a pytest test class

    test: TestCase
    lines: list[BackendLine]  # the reference first
    owners: tuple[str, ...] = ()  # its file's code owners


def testcase_page(*, project: Project, test: TestCase) -> TestCasePage:
    """Six queries, each table read once: backends (with their command templates), history,
    current outcomes (with reasons), open gaps (with reasons and triages), the reasons'
    issues, its file's code owners; a seventh for the run manifest when a gap is crashed,
    timed out, empty or not run, and one for its states from history when the project keeps
    them."""
    backends = reference_first(project, list(project.backends.all()))
    names = {b.pk: b.name for b in backends}
    commands = {b.pk: b.reproduce_command for b in backends}
    history = _history(test, list(names), missing_in_branch=project.default_branch)
    current = {
        c.backend_id: c for c in CurrentOutcome.objects.filter(test=test).select_related("reason")
    }
    gaps = {
        g.backend_id: g
        for g in Gap.objects.filter(test=test, is_open=True).select_related(
            "reason", "triage__issue"
        )
    }
    # Each reason once, whether an outcome or a gap names it; all their issues in one query.
    named = [c.reason for c in current.values()] + [g.reason for g in gaps.values()]
    found = list({r.pk: r for r in named if r is not None}.values())
    prefetch_related_objects(found, "issues")
    reasons = reason_infos(found)
    unrun = {}
    if any(g.state in UNRUN_STATES for g in gaps.values()):
        unrun = unrun_files(project=project, files=[test.file])
    pending = _pending_backends(project, test, names, current, gaps)
    also = _also_failing(project, backends, current, gaps)
    states = history_standings(project=project, test_ids=[test.pk])
    lines = []
    for pk, name in names.items():
        now, gap = current.get(pk), gaps.get(pk)
        lines.append(
            BackendLine(
                backend=name,
                is_reference=pk == project.reference_backend_id,
                outcome=Outcome(now.outcome).label if now else None,
                reason=reasons.get(now.reason_id) if now else None,
                gap=gap_info(gap, reasons) if gap else None,
                timeline=list(reversed(history[pk])),
                reproduce=reproduce_command(
                    commands[pk], file=test.file, class_name=test.class_name, name=test.name
                ),
                unrun=unrun.get((name, test.file)) if gap and gap.state in UNRUN_STATES else None,
                pending=pk in pending,
                also_failing=also.get(name) if gap else None,
                history=states.get((pk, test.pk)),
            )
        )
    owners = files_owners(project=project, files=[test.file]).get(test.file, ())
    return TestCasePage(test=test, lines=lines, owners=tuple(owners))


def _also_failing(project: Project, backends: list, current: dict, gaps: dict) -> dict:
    """Per backend name, where else the test fails (``parity.selectors.families``), from what
    the page read: no query. A backend is compared when its current run has the test or a gap
    on it (a missing test is a gap)."""
    names = {b.pk: b.name for b in backends}
    families = families_from(backends)
    counts_intended = project.score_counts_intended
    failing = [names[pk] for pk, gap in gaps.items() if gap_scored(gap, counts_intended)]
    compared = {names[pk] for pk in {*current, *gaps} if pk in names}
    # Under a gap the backend's score counts only: a declared, lost or intended one is no
    # failure of the backend's, and "fails on 1 of 2" beside it would read as one.
    return {
        names[pk]: also_failing(
            backend=names[pk], failing=failing, families=families, compared=compared
        )
        for pk, gap in gaps.items()
        if gap_scored(gap, counts_intended)
    }


def _pending_backends(
    project: Project, test: TestCase, backends: dict, current: dict, gaps: dict
) -> set[int]:
    """Backends the test is pending on: read (one query) only when the reference passes it and
    some backend has neither an outcome nor a gap for it, the only way it can be pending."""
    reference = current.get(project.reference_backend_id)
    if reference is None or reference.outcome != Outcome.PASSED:
        return set()
    if all(pk in current or pk in gaps for pk in backends):
        return set()
    return {backend for _, backend in pending_pairs(project=project, tests=[test.pk])}
