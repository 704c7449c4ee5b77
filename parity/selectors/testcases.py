"""Tests: search by canonical ID, and one test's outcome on every backend over its last runs."""

import datetime
from dataclasses import dataclass

from django.db import connection
from django.db.models import QuerySet
from psycopg2 import sql

from parity.engine.fragments import OUTCOME_PARAMS, OUTCOME_RANK
from parity.models import CurrentOutcome, Gap, Outcome, Project, Reason, TestCase

HISTORY_RUNS = 30  # per backend, newest first


def testcases_search(*, project: Project, q: str = "") -> QuerySet[TestCase]:
    tests = TestCase.objects.filter(project=project)
    if q.strip():
        tests = tests.filter(key__icontains=q.strip())
    return tests.order_by("key")


@dataclass(frozen=True)
class RunOutcome:
    run: int
    commit: str
    branch: str
    started_at: datetime.datetime
    complete: bool
    outcome: str
    reason: str | None


@dataclass(frozen=True)
class BackendHistory:
    outcome: str | None  # in the current run; None when the test is not in it
    reason: str | None
    gap: str | None  # the open gap's state, if any
    history: list[RunOutcome]


@dataclass(frozen=True)
class TestCaseHistory:
    __test__ = False  # not a pytest test class

    id: int
    test: str
    file: str
    backends: dict[str, BackendHistory]


_HISTORY_SQL = sql.SQL(
    """
    WITH per_run AS (
        SELECT DISTINCT ON (r.run_id) r.run_id, r.outcome, r.reason_id
        FROM parity_result r WHERE r.test_id = %(test)s
        ORDER BY r.run_id, {rank} DESC, r.id DESC
    ), ranked AS (
        SELECT p.run_id, p.outcome, p.reason_id, run.backend_id, run.commit, run.branch,
               run.started_at, run.complete,
               row_number() OVER (
                   PARTITION BY run.backend_id ORDER BY run.started_at DESC, run.id DESC
               ) AS n
        FROM per_run p JOIN parity_run run ON run.id = p.run_id
    )
    SELECT backend_id, run_id, commit, branch, started_at, complete, outcome, reason_id
    FROM ranked WHERE n <= %(limit)s
    ORDER BY backend_id, started_at DESC, run_id DESC
    """
).format(rank=OUTCOME_RANK.format(o=sql.SQL("r.outcome")))


def testcase_history(*, project: Project, test: TestCase) -> TestCaseHistory:
    names = dict(project.backends.values_list("pk", "name"))
    with connection.cursor() as cursor:
        params = {**OUTCOME_PARAMS, "test": test.pk, "limit": HISTORY_RUNS}
        cursor.execute(_HISTORY_SQL, params)
        rows = cursor.fetchall()
    current = {
        c.backend_id: c for c in CurrentOutcome.objects.filter(test=test).select_related("reason")
    }
    gaps = dict(Gap.objects.filter(test=test, is_open=True).values_list("backend_id", "state"))
    reasons = Reason.objects.in_bulk({row[7] for row in rows if row[7] is not None})
    history: dict[int, list[RunOutcome]] = {pk: [] for pk in names}
    for backend_id, run_id, commit, branch, started_at, complete, outcome, reason_id in rows:
        reason = reasons.get(reason_id)
        history[backend_id].append(
            RunOutcome(
                run=run_id,
                commit=commit,
                branch=branch,
                started_at=started_at,
                complete=complete,
                outcome=Outcome(outcome).label,
                reason=reason.text if reason else None,
            )
        )
    backends = {}
    for pk, name in sorted(names.items(), key=lambda item: item[1]):
        now = current.get(pk)
        backends[name] = BackendHistory(
            outcome=Outcome(now.outcome).label if now else None,
            reason=now.reason.text if now and now.reason else None,
            gap=gaps.get(pk),
            history=history[pk],
        )
    return TestCaseHistory(id=test.pk, test=test.key, file=test.file, backends=backends)
