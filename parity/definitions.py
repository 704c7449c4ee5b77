"""What the engine (which writes by them) and the selectors (which must agree with it: the
verdict, a test's history) both mean by a run that may be current, a test's outcome in a run,
a gap's state, the triage that applies and a coverage drop. Neither side owns them, so neither
imports the other for them.

Fragments are ``psycopg2.sql`` objects, composed into statements with ``.format``; values are
always bound as parameters. Outcome codes are those of ``parity.models.Outcome``.
"""

from django.db.models import Q, QuerySet
from psycopg2 import sql

from parity.models import (
    IssueState,
    Outcome,
    Project,
    Reason,
    Result,
    Run,
    TestCase,
    TrackingIssue,
    Triage,
)
from parity.models.sql import model_sql

OUTCOME_PARAMS = {
    "passed": Outcome.PASSED.value,
    "skipped": Outcome.SKIPPED.value,
    "failed": Outcome.FAILED.value,
    "error": Outcome.ERROR.value,
}

# A test's outcome in a run combines its results there (shards, reruns across uploads):
# error beats failed beats passed beats skipped. The reason comes from the winning result.
OUTCOME_RANK = sql.SQL(
    "CASE {o} WHEN %(error)s THEN 4 WHEN %(failed)s THEN 3 WHEN %(passed)s THEN 2 ELSE 1 END"
)


def run_outcomes(run_param: str) -> sql.Composed:
    """(test_id, outcome, reason_id) of one run, one row per test; the run is bound as
    ``%(<run_param>)s``."""
    return model_sql(
        "SELECT DISTINCT ON (test_id) test_id, outcome, reason_id FROM {result} "
        "WHERE run_id = {run} ORDER BY test_id, {rank} DESC, id DESC",
        result=Result,
        run=sql.Placeholder(run_param),
        rank=OUTCOME_RANK.format(o=sql.Identifier("outcome")),
    )


def gap_state(outcome: sql.Composable) -> sql.Composed:
    """The gap state of a reference-passing test whose outcome on the backend is ``outcome``
    (NULL: the test is not in the backend's run)."""
    return sql.SQL(
        "CASE {o} WHEN %(skipped)s THEN 'skipped' WHEN %(failed)s THEN 'failed' "
        "WHEN %(error)s THEN 'error' ELSE 'missing' END"
    ).format(o=outcome)


def triage_covers(triage: str, gap: str) -> sql.Composed:
    """Whether the triage aliased ``triage`` names the gap-shaped row aliased ``gap``
    (project_id, backend_id, test_id, reason_id): its backends, and its test, reason or
    pattern. Expiry is not considered here."""
    return model_sql(
        """{t}.project_id = {g}.project_id
        AND (NOT EXISTS (SELECT 1 FROM {backends} tb WHERE tb.triage_id = {t}.id)
             OR EXISTS (SELECT 1 FROM {backends} tb
                        WHERE tb.triage_id = {t}.id AND tb.backend_id = {g}.backend_id))
        AND ({t}.test_id = {g}.test_id OR {t}.reason_id = {g}.reason_id
             OR ({t}.match_regex <> '' AND EXISTS (
                 SELECT 1 FROM {testcase} tc
                 WHERE tc.id = {g}.test_id AND tc.key ~ {t}.match_regex)))""",
        backends=Triage.backends.through,
        testcase=TestCase,
        t=sql.Identifier(triage),
        g=sql.Identifier(gap),
    )


# An exemption applies through the day it expires on (in UTC, the database session's zone).
TRIAGE_UNEXPIRED = sql.SQL("(t.expires_on IS NULL OR t.expires_on >= CURRENT_DATE)")


def triage_pick(gap: str) -> sql.Composed:
    """The one unexpired triage that applies to the gap-shaped row aliased ``gap``, for a
    LATERAL join. Intended wins over tracked and quarantine, then the most specific (a test,
    then a pattern, then a reason; named backends over all), then the newest."""
    return model_sql(
        """SELECT t.id, t.kind FROM {triage} t
        WHERE {covers} AND {unexpired}
        ORDER BY t.kind = 'intended' DESC, t.test_id IS NOT NULL DESC,
                 t.match_regex <> '' DESC,
                 EXISTS (SELECT 1 FROM {backends} tb WHERE tb.triage_id = t.id) DESC,
                 t.created_at DESC, t.id DESC
        LIMIT 1""",
        triage=Triage,
        backends=Triage.backends.through,
        covers=triage_covers("t", gap),
        unexpired=TRIAGE_UNEXPIRED,
    )


def reason_has_issue(reason_id: sql.Composable) -> sql.Composed:
    return model_sql(
        "EXISTS (SELECT 1 FROM {reason_issues} ri WHERE ri.reason_id = {r})",
        reason_issues=Reason.issues.through,
        r=reason_id,
    )


def cited_issues_closed(reason_id: sql.Composable, triage_id: sql.Composable) -> sql.Composed:
    """Whether no issue a gap cites is still open (or not known to be closed): its reason's
    issues, and its triage's when the triage is tracked or quarantine. True for a gap citing
    none, so callers require ``tracked`` (which means it cites one) beside it."""
    return model_sql(
        """NOT EXISTS (
            SELECT 1 FROM {reason_issues} ri JOIN {issue} i ON i.id = ri.trackingissue_id
            WHERE ri.reason_id = {r} AND i.state <> {closed})
        AND NOT EXISTS (
            SELECT 1 FROM {triage} ct JOIN {issue} i ON i.id = ct.issue_id
            WHERE ct.id = {t} AND ct.kind IN ('tracked', 'quarantine') AND i.state <> {closed})""",
        reason_issues=Reason.issues.through,
        issue=TrackingIssue,
        triage=Triage,
        r=reason_id,
        t=triage_id,
        closed=sql.Literal(IssueState.CLOSED.value),
    )


def default_branch_runs(project: Project) -> QuerySet[Run]:
    """Runs that may be current: on the default branch, or sent with no branch at all."""
    return Run.objects.filter(project=project).filter(
        Q(branch=project.default_branch) | Q(branch="")
    )


def coverage_dropped(*, previous: int | None, current: int, percent: float) -> bool:
    """True when the run has more than ``percent`` % fewer tests than the one before it."""
    if not previous:
        return False
    return current < previous * (1 - percent / 100)
