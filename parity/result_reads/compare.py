"""A compare view's report: each test's pass/fail counts on the sample and on the basis over
the view's window, and its state by Fisher's exact test (``parity.pure.compare``,
docs/compare-views.md). One statement counts every test of both variants' runs in the window:
each run's results are read by the results' (run, test) index, a test's outcome in a run is the
one every surface uses (``parity.definitions.outcome_first``), and Postgres sums them per test.
Its cost follows the number of results in the window's runs, not the history's."""

import datetime
from collections import Counter
from dataclasses import dataclass

from django.utils import timezone
from psycopg2 import sql

from parity.definitions import OUTCOME_PARAMS, may_be_current_sql, outcome_first
from parity.models import CompareView, Result, Run, TestCase
from parity.models.sql import model_sql
from parity.plans import hash_joins
from parity.pure.compare import (
    CompareRules,
    CompareState,
    Counts,
    JudgedRow,
    judge,
    rules_of_settings,
    sentence,
)
from parity.read_replica import read_cursor

# Both variants' runs that count: complete, of the default branch and not probes (the runs that
# may be current), whose results retention kept, started inside the window.
_COUNTS_SQL = """
    WITH runs AS (
        SELECT run.id, run.backend_id FROM {run} run
        WHERE run.backend_id IN (%(sample)s, %(basis)s) AND run.complete
          AND {may_be_current} AND run.results_expired_at IS NULL
          AND run.started_at >= %(since)s
    ), outcomes AS (
        SELECT runs.backend_id, one.test_id, one.outcome FROM runs CROSS JOIN LATERAL (
            SELECT DISTINCT ON (r.test_id) r.test_id, r.outcome FROM {result} r
            WHERE r.run_id = runs.id ORDER BY r.test_id, {first}
        ) one
    )
    SELECT o.test_id, t.key,
        count(*) FILTER (WHERE o.backend_id = %(sample)s AND o.outcome = %(passed)s),
        count(*) FILTER (WHERE o.backend_id = %(sample)s AND o.outcome <> %(passed)s),
        count(*) FILTER (WHERE o.backend_id = %(basis)s AND o.outcome = %(passed)s),
        count(*) FILTER (WHERE o.backend_id = %(basis)s AND o.outcome <> %(passed)s),
        (SELECT count(*) FROM runs WHERE backend_id = %(sample)s),
        (SELECT count(*) FROM runs WHERE backend_id = %(basis)s)
    FROM outcomes o JOIN {test} t ON t.id = o.test_id
    WHERE o.outcome <> %(skipped)s
    GROUP BY o.test_id, t.key
    ORDER BY t.key
"""
_COUNTS = model_sql(
    _COUNTS_SQL,
    run=Run,
    result=Result,
    test=TestCase,
    may_be_current=may_be_current_sql("run", sql.Placeholder("default_branch")),
    first=outcome_first("r"),
)
_RUNS = model_sql(
    """SELECT run.backend_id, count(*) FROM {run} run
    WHERE run.backend_id IN (%(sample)s, %(basis)s) AND run.complete
      AND {may_be_current} AND run.results_expired_at IS NULL AND run.started_at >= %(since)s
    GROUP BY run.backend_id""",
    run=Run,
    may_be_current=may_be_current_sql("run", sql.Placeholder("default_branch")),
)


@dataclass(frozen=True)
class TestCounts:
    __test__ = False  # not a pytest test class

    test_id: int
    test: str  # file::Class::name
    sample: Counts
    basis: Counts


@dataclass(frozen=True)
class WindowCounts:
    since: datetime.datetime
    sample_runs: int
    basis_runs: int
    tests: list[TestCounts]  # by key


@dataclass(frozen=True)
class CompareReport:
    view: CompareView
    rules: CompareRules
    since: datetime.datetime
    sample_runs: int
    basis_runs: int
    rows: list[JudgedRow]  # worst state first, then by the sample's drop, then by test
    counts: dict[CompareState, int]  # of every row, whatever the filter


def rules_of(view: CompareView) -> CompareRules:
    return rules_of_settings(view.confidence, view.tolerance, view.min_failures)


def compare_counts(
    *, view: CompareView, days: int | None = None, now: datetime.datetime | None = None
) -> WindowCounts:
    """Each test's runs that passed and failed (or errored) on the view's sample and basis over
    its window (``days`` instead of the view's), ending ``now``."""
    since = (now or timezone.now()) - datetime.timedelta(days=days or view.days)
    params = {
        **OUTCOME_PARAMS,
        "sample": view.sample_id,
        "basis": view.basis_id,
        "since": since,
        "default_branch": view.project.default_branch,
    }
    with read_cursor(atomic=True) as cursor:
        # Each run's outcomes joined to the tests, over every run of the window: planned as
        # the other reads of whole runs are (``parity.plans``, 1), and reset after it, since a
        # save of the settings computes the view inside the request's transaction.
        with hash_joins(cursor):
            cursor.execute(_COUNTS, params)
            rows = cursor.fetchall()
        if not rows:
            cursor.execute(_RUNS, params)
            runs = dict(cursor.fetchall())
            sample_runs, basis_runs = runs.get(view.sample_id, 0), runs.get(view.basis_id, 0)
        else:
            sample_runs, basis_runs = rows[0][6], rows[0][7]
    tests = [
        TestCounts(test_id, key, Counts(sp, sf), Counts(bp, bf))
        for test_id, key, sp, sf, bp, bf, _, _ in rows
    ]
    return WindowCounts(since, sample_runs, basis_runs, tests)


def judged(*, view: CompareView, counts: WindowCounts, rules: CompareRules) -> list[JudgedRow]:
    """Every test of ``counts`` judged by ``rules``, worst first."""
    sample_name, basis_name = view.sample.name, view.basis.name
    rows = []
    for t in counts.tests:
        judgement = judge(sample=t.sample, basis=t.basis, rules=rules)
        text = sentence(
            sample_name=sample_name,
            sample=t.sample,
            basis_name=basis_name,
            basis=t.basis,
            p=judgement.p,
        )
        rows.append(JudgedRow(t.test_id, t.test, t.sample, t.basis, judgement, text))
    rows.sort(key=lambda r: (r.state.rank, -(r.judgement.drop or 0.0), r.test))
    return rows


def compare_report(
    *,
    view: CompareView,
    state: CompareState | None = None,
    now: datetime.datetime | None = None,
) -> CompareReport:
    """The view's report; ``state``: its rows of that state only (the counts stay whole)."""
    rules = rules_of(view)
    counts = compare_counts(view=view, now=now)
    rows = judged(view=view, counts=counts, rules=rules)
    tally = Counter(r.state for r in rows)
    return CompareReport(
        view=view,
        rules=rules,
        since=counts.since,
        sample_runs=counts.sample_runs,
        basis_runs=counts.basis_runs,
        rows=[r for r in rows if state in (None, r.state)],
        counts={s: tally.get(s, 0) for s in CompareState},
    )


@dataclass(frozen=True)
class StateChange:
    test_id: int
    test: str
    before: JudgedRow | None  # None: not counted in the saved window
    after: JudgedRow | None  # None: not counted in the new window


def compare_preview(
    *, view: CompareView | None, proposed: CompareView, now: datetime.datetime | None = None
) -> list[StateChange]:
    """The tests whose state would change if ``view`` (None: a view not yet saved) took the
    settings of ``proposed`` (unsaved): before against after, worst new state first. Nothing
    is written; the window is read again only if its variants or days changed."""
    now = now or timezone.now()
    before: dict[int, JudgedRow] = {}
    counts = None
    if view is not None:
        counts = compare_counts(view=view, now=now)
        before = {r.test_id: r for r in judged(view=view, counts=counts, rules=rules_of(view))}
    same_window = view is not None and (view.sample_id, view.basis_id, view.days) == (
        proposed.sample_id,
        proposed.basis_id,
        proposed.days,
    )
    if not same_window:
        counts = compare_counts(view=proposed, now=now)
    after = {r.test_id: r for r in judged(view=proposed, counts=counts, rules=rules_of(proposed))}
    changes = []
    for test_id in before.keys() | after.keys():
        b, a = before.get(test_id), after.get(test_id)
        if b is None or a is None or b.state != a.state:
            changes.append(StateChange(test_id, (a or b).test, b, a))

    def order(c: StateChange) -> tuple[int, str]:
        return (c.after.state.rank if c.after else len(CompareState), c.test)

    return sorted(changes, key=order)
