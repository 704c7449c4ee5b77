"""The rules the engine (which writes by them), the verdict and the aligned view (which must
agree with it) and the other reads share, each defined once here: which run may be current, a
test's outcome in a run, a gap and its state (pending and absent included), the triage that
applies (and its expiry), a coverage drop, and run health (the gaps infrastructure made).
Neither side owns them, so neither imports the other for them;
``tests/tools/test_rules_defined_once.py`` fails where one is spelled again elsewhere, and
``tests/parity/test_rules_model.py`` holds their users to a plain-Python model.

Fragments are ``psycopg2.sql`` objects, composed into statements with ``.format`` (a rule used
from Python or the ORM too has its predicate or Q beside its fragment); values are always
bound as parameters. Outcome codes are those of ``parity.models.Outcome``. How statements are
planned (join methods, memory, fences) is set in ``parity.plans``.
"""

import datetime
from dataclasses import dataclass

from django.db.models import F, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from psycopg2 import sql

from parity.models import (
    ABSENT_STATES,
    Backend,
    CurrentOutcome,
    Gap,
    GapState,
    HistoryState,
    IssueState,
    Outcome,
    Project,
    Reason,
    Result,
    Run,
    RunFile,
    RunFileState,
    TestCase,
    TestHistory,
    TrackingIssue,
    Triage,
    TriageLapse,
)
from parity.models.sql import model_sql
from parity.plans import FENCE
from parity.pure.history_states import HistoryRules

OUTCOME_PARAMS = {
    "passed": Outcome.PASSED.value,
    "skipped": Outcome.SKIPPED.value,
    "failed": Outcome.FAILED.value,
    "error": Outcome.ERROR.value,
}

# A test's outcome in a run combines its results there (shards, reruns across uploads):
# error beats failed beats passed beats skipped, and among equals the last written. The reason
# comes from the winning result.
_OUTCOME_RANK = sql.SQL(
    "CASE {o} WHEN %(error)s THEN 4 WHEN %(failed)s THEN 3 WHEN %(passed)s THEN 2 ELSE 1 END"
)


def outcome_first(result: str | None = None) -> sql.Composed:
    """An ORDER BY that puts a test's winning result in a run first, of results aliased
    ``result`` (None: unqualified)."""

    def column(name: str) -> sql.Identifier:
        return sql.Identifier(result, name) if result else sql.Identifier(name)

    return sql.SQL("{rank} DESC, {id} DESC").format(
        rank=_OUTCOME_RANK.format(o=column("outcome")), id=column("id")
    )


def run_outcomes(run_param: str) -> sql.Composed:
    """(test_id, outcome, reason_id) of one run, one row per test; the run is bound as
    ``%(<run_param>)s``."""
    return model_sql(
        "SELECT DISTINCT ON (test_id) test_id, outcome, reason_id FROM {result} "
        "WHERE run_id = {run} ORDER BY test_id, {first}",
        result=Result,
        run=sql.Placeholder(run_param),
        first=outcome_first(),
    )


def runs_outcomes(runs: sql.Composable) -> sql.Composed:
    """(run_id, test_id, outcome, reason_id) of the runs ``runs`` (an array), one row per run
    and test: ``run_outcomes`` of each."""
    return model_sql(
        "SELECT DISTINCT ON (run_id, test_id) run_id, test_id, outcome, reason_id FROM {result} "
        "WHERE run_id = ANY({runs}) ORDER BY run_id, test_id, {first}",
        result=Result,
        runs=runs,
        first=outcome_first(),
    )


# A version transition's kinds (``parity.models.TransitionKind``), of the tests of the run
# before and the run after: failed (or error) before and passed after, the reverse, only after,
# only before. A skip on either side, or an outcome that did not move, is none of them. The
# engine counts them when the transition happens; the transition's page lists them.
_TRANSITION_SQL = """
    SELECT test_id, before, after, kind FROM (
        SELECT coalesce(a.test_id, b.test_id) AS test_id, b.outcome AS before,
               a.outcome AS after,
               CASE WHEN b.test_id IS NULL THEN 'new'
                    WHEN a.test_id IS NULL THEN 'gone'
                    WHEN b.outcome IN (%(failed)s, %(error)s) AND a.outcome = %(passed)s
                        THEN 'fail_to_pass'
                    WHEN b.outcome = %(passed)s AND a.outcome IN (%(failed)s, %(error)s)
                        THEN 'pass_to_fail'
               END AS kind
        FROM ({before}) b FULL JOIN ({after}) a ON a.test_id = b.test_id
    ) moved WHERE kind IS NOT NULL
"""


def transition_tests() -> sql.Composed:
    """(test_id, before, after, kind) of each test that moved between the runs bound as
    ``%(before)s`` and ``%(after)s`` (with ``OUTCOME_PARAMS``); ``before``/``after`` are
    outcome codes, NULL where the run lacks the test."""
    return sql.SQL(_TRANSITION_SQL).format(
        before=run_outcomes("before"), after=run_outcomes("after")
    )


# A gap's state where the backend has no row for it: the test the reference first ran after the
# backend's run started (not yet run there), and the test the backend ran and the reference
# did not.
PENDING = sql.Literal("pending")  # a PendingTest, never a Gap row
REFERENCE_MISSING = sql.Literal(GapState.REFERENCE_MISSING.value)


def first_ran_after(since: sql.Composable, started_at: sql.Composable) -> sql.Composed:
    """Whether the reference first ran a test (its ``CurrentOutcome.since``) after a backend's
    run started (``started_at``): not yet run there, so not compared (``gap``'s ``pending``).
    The pending condition, spelled here only."""
    return sql.SQL("coalesce({since} > {at}, false)").format(since=since, at=started_at)


def first_ran_between(
    since: sql.Composable, earlier: sql.Composable, later: sql.Composable
) -> sql.Composed:
    """Whether a test is pending in a run started at ``earlier`` and not in one started at
    ``later`` (``first_ran_after`` of the one, not of the other): the reference first ran it
    between the two runs' starts."""
    return sql.SQL("({after_earlier} AND NOT {after_later})").format(
        after_earlier=first_ran_after(since, earlier), after_later=first_ran_after(since, later)
    )


def gap(
    outcome: sql.Composable,
    *,
    absent: sql.Composable | None = None,
    pending: sql.Composable | None = None,
) -> sql.Composed:
    """The gap of a test the reference passes, whose outcome in the backend's run is
    ``outcome`` (NULL: the run lacks it): NULL when the run passes it too, else its state.
    skipped, failed or error as it ran; lacking it, ``pending`` when the condition ``pending``
    holds (the reference first ran it after the run started), else ``absent`` (why the run
    lacks it: a state of ``absent_tests``; NULL: its file was not in the run manifest) or
    ``missing``. The other gap, a test the run has and the reference lacks, is
    ``REFERENCE_MISSING``."""
    return sql.SQL(
        "CASE WHEN {o} = %(passed)s THEN NULL WHEN {o} = %(skipped)s THEN 'skipped' "
        "WHEN {o} = %(failed)s THEN 'failed' WHEN {o} = %(error)s THEN 'error' "
        "WHEN {o} IS NULL AND {pending} THEN {pending_state} ELSE coalesce({a}, 'missing') END"
    ).format(
        o=outcome,
        a=absent if absent is not None else sql.NULL,
        pending=pending if pending is not None else sql.SQL("false"),
        pending_state=PENDING,
    )


def lacks_pass(outcome: sql.Composable) -> sql.Composed:
    """Whether a run whose outcome of a test is ``outcome`` (NULL: it lacks it) does not pass
    it: where the reference passes it, exactly when ``gap`` is not NULL. (A filter that reads
    the outcome alone, so it can apply before the join that finds why a test is absent.)"""
    return sql.SQL("({o} IS NULL OR {o} <> %(passed)s)").format(o=outcome)


def absent_tests(runs: sql.Composable) -> sql.Composed:
    """(run_id, test_id, state): the project's tests (``%(project)s``) in files the run manifest
    of the runs ``runs`` (a subquery or a list) lists as crashed, timed out, empty or not run;
    a test of such a file that has a result is no gap of this kind (``gap``'s CASE)."""
    # A file's tests by the (project, file, ...) index, file by file, even under hash joins:
    # the fence keeps the lateral subquery a loop over the few files listed.
    return model_sql(
        "SELECT rf.run_id, tc.id AS test_id, rf.state FROM {run_file} rf "
        "CROSS JOIN LATERAL (SELECT t.id FROM {testcase} t "
        "WHERE t.project_id = %(project)s AND t.file = rf.file {fence}) tc "
        "WHERE rf.run_id IN ({runs}) AND rf.state <> {ran}",
        fence=FENCE,
        run_file=RunFile,
        testcase=TestCase,
        runs=runs,
        ran=sql.Literal(RunFileState.RAN.value),
    )


# A gap state of a reference-passing test the run lacks, whatever the reason (``IN`` it).
ABSENT = sql.SQL("({})").format(sql.SQL(", ").join(sql.Literal(s.value) for s in ABSENT_STATES))


# An exemption applies through the day it expires on (in UTC, the database session's zone):
# in SQL of a triage ``t``, and as a Q.
TRIAGE_UNEXPIRED = sql.SQL("(t.expires_on IS NULL OR t.expires_on >= CURRENT_DATE)")


def unexpired(expires_on: datetime.date | None, today: datetime.date) -> bool:
    """``TRIAGE_UNEXPIRED`` of one triage's expiry day."""
    return expires_on is None or expires_on >= today


def triages_unexpired(today: datetime.date | None = None) -> Q:
    """Triages not past their expiry ``today`` (default: today, UTC): ``TRIAGE_UNEXPIRED``."""
    today = today or timezone.now().date()
    return Q(expires_on__isnull=True) | Q(expires_on__gte=today)


def triages_expired_between(since: datetime.date, today: datetime.date) -> Q:
    """Triages that applied on ``since`` and no longer do ``today``: they expired between."""
    return triages_unexpired(since) & ~triages_unexpired(today)


# An untracked gap: no issue tracks it, no triage made it a decision (intended, or not
# applicable), its test is not flaky on the backend (states from history: reported as flaky,
# ``parity.engine.history``), and it is the backend's (infrastructure did not lose its file:
# ``INFRA_STATES``, run health's, in no score and none of untracked, tracked or intended). As a
# Q over gaps, with any lookup prefix. ``standing`` says the same of one gap; ``COUNTED`` is
# its SQL.
def untracked_q(prefix: str = "") -> Q:
    return Q(
        **{
            f"{prefix}tracked": False,
            f"{prefix}intended": False,
            f"{prefix}not_applicable": False,
            f"{prefix}flaky": False,
        }
    ) & ~Q(**{f"{prefix}state__in": [s.value for s in INFRA_STATES]})


# A triage in force: unexpired, and not a declaration a maintainer set aside (``overridden``).
# The engine and CI's lists apply only these.
TRIAGE_IN_FORCE = sql.SQL("({} AND NOT t.overridden)").format(TRIAGE_UNEXPIRED)


def triages_in_force(today: datetime.date | None = None) -> Q:
    """``TRIAGE_IN_FORCE`` as a Q."""
    return triages_unexpired(today) & Q(overridden=False)


# A triage applies to the backends it names, to every backend when it names none, and to a
# variant (rocm-gfx942) when it names the variant's family (rocm). As a Q over triages.
def triages_on_backend(backend: Backend) -> Q:
    named = Q(backends=backend)
    if backend.family_id is not None:
        named |= Q(backends=backend.family_id)
    return Q(backends__isnull=True) | named


# A test whose file holds no ":" (and is not empty: a test with no file has its class or name
# there) has that file, unescaped, before the first "::" of its key (parity.pure.normalize.ids
# escapes only after a ":"): its key's file part is its file.
_PLAIN_FILE = sql.SQL("({file} <> '' AND strpos({file}, ':') = 0)")

# A glob over files with no ":" matches a key exactly when it matches the key's file part and
# "::": its regex cannot match a ":", so the "::" it ends with is the first of the key. Those
# of a plain file are matched once per file.
_FILE_GLOB = sql.SQL("(t.match_shape = 'glob' AND strpos(t.match, ':') = 0)")

# What a ``file`` and an ``anyfile`` pattern must equal to match a row ``r``'s key: the key's
# file part (before its first "::", which the escaping keeps out of file parts), and ``**::`` +
# the rest when no ":" comes before that "::" (what ``^[^:]*::rest$`` needs).
_KEY_FILE = sql.SQL(
    "CASE WHEN strpos(r.test_key, '::') > 0 THEN split_part(r.test_key, '::', 1) END"
)
_KEY_ANY_FILE = sql.SQL(
    "CASE WHEN strpos(r.test_key, '::') > 0 AND strpos(r.test_key, ':') = strpos(r.test_key, '::') "
    "THEN '**::' || substr(r.test_key, strpos(r.test_key, '::') + 2) END"
)


def triage_candidates(
    rows: str,
    row_id: str,
    *,
    unexpired: bool = True,
    lapsed: sql.Composable | None = None,
    lapses: bool = True,
    in_force_on: sql.Composable | None = None,
) -> sql.Composed:
    """Every (row, triage) pair where a triage names a gap-shaped row of relation ``rows``
    (columns ``row_id``, backend_id, test_id, reason_id, test_key, the test's canonical ID, and
    test_file, its file; one project, bound as ``%(project)s``): by its test, its reason or its
    pattern, on its backends (a backend named covers its variants too); with ``unexpired``,
    only triages not past their expiry day. A triage with a condition applies on a backend
    unless ``TriageLapse`` says the condition does not hold there (``parity.engine.lapses``),
    or, given ``lapsed`` (an array of triage ids: one run's rows), unless it is in ``lapsed``;
    an unconditioned triage never looks; ``in_force_on`` (a date): unexpired on that day
    rather than today (a verdict's baseline, as its exemptions were then); without ``lapses``,
    a conditioned triage applies whether or not its condition holds (what it would match: a
    lapsed exemption whose tests still fail is lapsed, not stale). Columns: ``row_id``,
    reason_id (the row's), triage_id, kind, names_test, names_pattern, has_backends, created_at.

    Most patterns name one test, one file, or one class's test in any file: those are found by
    equality on part of the key (``parity.pure.globs.pattern_shape``; the same keys their regex
    matches). A file pattern, and a glob over files with no ":" (``_FILE_GLOB``), depend on the
    key's file part alone, which is the test's file whenever that has no ":" (``_PLAIN_FILE``:
    the key starts with it and "::", unescaped): those are matched once per file of the rows,
    not once per row, and only the other rows' keys are split. Other globs are matched one
    triage at a time over all rows: Postgres keeps only a few compiled regular expressions, and
    a row-at-a-time loop over many would recompile them."""
    return model_sql(
        """
        WITH files AS MATERIALIZED (
            -- None when no triage goes by the key's file part (the rows are then not read)
            SELECT DISTINCT r.test_file FROM {rows} r
            WHERE EXISTS (SELECT 1 FROM {triage} t WHERE t.project_id = %(project)s
                          AND (t.match_shape = 'file' OR {file_glob}))
        ),
        file_hits AS MATERIALIZED (
            -- (file, triage) for each plain file of the rows a file pattern names or a glob
            -- over files matches
            SELECT f.test_file, t.id AS triage_id
            FROM files f JOIN {triage} t
              ON t.project_id = %(project)s AND t.match_shape = 'file' AND t.match = f.test_file
            WHERE {plain_file}
            UNION ALL
            SELECT f.test_file, t.id
            FROM {triage} t CROSS JOIN LATERAL (
                SELECT f.test_file FROM files f
                WHERE {plain_file} AND (f.test_file || '::') ~ t.match_regex
                {fence}  -- keeps the triage the outer loop, one regex at a time
            ) f
            WHERE t.project_id = %(project)s AND {file_glob}
        ),
        -- The rows whose key's file part is not their file (most often none: a hash join on
        -- no files never reads the rows): their file patterns and globs go by the key.
        by_key AS MATERIALIZED (
            SELECT r.* FROM {rows} r JOIN files f ON f.test_file = r.test_file
            WHERE NOT {plain_file}
        )
        SELECT x.row_id AS {row_id}, x.reason_id, t.id AS triage_id, t.kind,
               t.test_id IS NOT NULL AS names_test,
               t.match_regex <> '' AS names_pattern,
               EXISTS (SELECT 1 FROM {backends} tb WHERE tb.triage_id = t.id) AS has_backends,
               t.created_at
        FROM (
            SELECT r.{row_id} AS row_id, r.backend_id, r.reason_id, t.id AS triage_id
            FROM {rows} r JOIN {triage} t ON t.test_id = r.test_id
            UNION ALL
            SELECT r.{row_id}, r.backend_id, r.reason_id, t.id
            FROM {rows} r JOIN {triage} t ON t.reason_id = r.reason_id
            UNION ALL
            SELECT r.{row_id}, r.backend_id, r.reason_id, t.id
            FROM {rows} r JOIN {triage} t
              ON t.project_id = %(project)s AND t.match_shape = 'key' AND t.match = r.test_key
            UNION ALL
            SELECT r.{row_id}, r.backend_id, r.reason_id, h.triage_id
            FROM {rows} r JOIN file_hits h ON h.test_file = r.test_file
            UNION ALL
            SELECT r.{row_id}, r.backend_id, r.reason_id, t.id
            FROM by_key r JOIN {triage} t
              ON t.project_id = %(project)s AND t.match_shape = 'file' AND t.match = {key_file}
            UNION ALL
            SELECT r.{row_id}, r.backend_id, r.reason_id, t.id
            FROM {rows} r JOIN {triage} t
              ON t.project_id = %(project)s AND t.match_shape = 'anyfile'
             AND t.match = {key_any_file}
            UNION ALL
            SELECT hit.row_id, hit.backend_id, hit.reason_id, t.id
            FROM {triage} t CROSS JOIN LATERAL (
                SELECT r.{row_id} AS row_id, r.backend_id, r.reason_id FROM {rows} r
                WHERE strpos(r.test_key, t.match_literal) > 0 AND r.test_key ~ t.match_regex
                {fence}  -- keeps the triage the outer loop, one regex at a time
            ) hit
            WHERE t.project_id = %(project)s AND t.match_shape = 'glob' AND NOT {file_glob}
            UNION ALL
            SELECT r.{row_id}, r.backend_id, r.reason_id, t.id
            FROM by_key r JOIN {triage} t
              ON t.project_id = %(project)s AND {file_glob} AND r.test_key ~ t.match_regex
        ) x
        JOIN {triage} t ON t.id = x.triage_id
        WHERE t.project_id = %(project)s AND {unexpired}
          AND (NOT EXISTS (SELECT 1 FROM {backends} tb WHERE tb.triage_id = t.id)
               OR EXISTS (SELECT 1 FROM {backends} tb JOIN {backend} b ON b.id = x.backend_id
                          WHERE tb.triage_id = t.id AND tb.backend_id IN (b.id, b.family_id)))
          AND (t.condition = '' OR {applies})
        """,
        backends=Triage.backends.through,
        backend=Backend,
        triage=Triage,
        applies=sql.SQL("true")
        if not lapses
        else (
            model_sql(
                "NOT EXISTS (SELECT 1 FROM {lapse} l"
                " WHERE l.triage_id = t.id AND l.backend_id = x.backend_id)",
                lapse=TriageLapse,
            )
            if lapsed is None
            else sql.SQL("t.id <> ALL({})").format(lapsed)
        ),
        unexpired=(
            sql.SQL("((t.expires_on IS NULL OR t.expires_on >= {}) AND NOT t.overridden)").format(
                in_force_on
            )
            if in_force_on is not None
            else TRIAGE_IN_FORCE
            if unexpired
            else sql.SQL("NOT t.overridden")
        ),
        rows=sql.Identifier(rows),
        row_id=sql.Identifier(row_id),
        plain_file=_PLAIN_FILE.format(file=sql.SQL("f.test_file")),
        file_glob=_FILE_GLOB,
        key_file=_KEY_FILE,
        key_any_file=_KEY_ANY_FILE,
        fence=FENCE,
    )


def triage_picks(
    rows: str,
    row_id: str,
    *,
    untriaged: sql.Composable | None = None,
    lapsed: sql.Composable | None = None,
    in_force_on: sql.Composable | None = None,
) -> sql.Composed:
    """The one unexpired triage that applies to each row of ``rows`` that any applies to (see
    ``triage_candidates``, ``lapsed`` too): a declaration that the test is not applicable wins,
    then intended over tracked and quarantine, then the most specific (a test, then a pattern,
    then a reason; named backends over all), then the newest. With
    ``untriaged``, a condition on a row ``r``, the rows where it holds are there even when no
    triage applies, with a NULL triage (one row per row: no outer join needed, which Postgres,
    blind to a CTE's size, would run as a loop). Columns: ``row_id``, reason_id (the row's),
    triage_id, kind."""
    every = sql.SQL("")
    if untriaged is not None:
        every = sql.SQL(
            "UNION ALL SELECT r.{row_id}, r.reason_id, NULL, NULL, false, false, false, NULL "
            "FROM {rows} r WHERE {untriaged}"
        ).format(row_id=sql.Identifier(row_id), rows=sql.Identifier(rows), untriaged=untriaged)
    return sql.SQL(
        """
        SELECT DISTINCT ON (c.{row_id}) c.{row_id}, c.reason_id, c.triage_id, c.kind
        FROM ({candidates} {every}) c
        ORDER BY c.{row_id}, c.triage_id IS NOT NULL DESC, c.kind = 'not_applicable' DESC,
                 c.kind = 'intended' DESC,
                 c.names_test DESC, c.names_pattern DESC, c.has_backends DESC,
                 c.created_at DESC, c.triage_id DESC
        """
    ).format(
        row_id=sql.Identifier(row_id),
        candidates=triage_candidates(rows, row_id, lapsed=lapsed, in_force_on=in_force_on),
        every=every,
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


# Which run may be current. A run on the project's default branch, or sent with no branch at
# all, becomes its backend's current run once complete and the latest started; never a probe
# run (it ran the exempted tests too: it says only which exemptions pass now). One rule, each
# spelling beside the others, from the same fields and ``NO_BRANCH`` (tests/parity/
# test_definitions.py holds them equal): a predicate on one run, a Q, and a SQL condition.
NO_BRANCH = ""


def is_default_branch(branch: str, default_branch: str) -> bool:
    """A run's ``branch`` counts as the default branch: it is, or CI sent none."""
    return branch in (default_branch, NO_BRANCH)


def may_be_current(*, probe: bool, branch: str, default_branch: str) -> bool:
    return not probe and is_default_branch(branch, default_branch)


def on_default_branch_q(default_branch: str | F) -> Q:
    """``is_default_branch`` of runs, for ``default_branch`` a value or an ``F`` of the run's
    project's: ``may_be_current`` but for probes."""
    return Q(branch=default_branch) | Q(branch=NO_BRANCH)


def default_branch_runs(project: Project) -> QuerySet[Run]:
    """The project's runs that may be current (``may_be_current``)."""
    return Run.objects.filter(project=project, probe=False).filter(
        on_default_branch_q(project.default_branch)
    )


def may_be_current_since(project: Project, since: datetime.datetime) -> QuerySet[Run]:
    """The project's runs that may be current started since ``since``, current or not: a
    window of a backend's history (a suite's runs)."""
    return default_branch_runs(project).filter(started_at__gte=since)


def on_default_branch_sql(run: str, default_branch: sql.Composable) -> sql.Composed:
    """``on_default_branch_q`` of the run aliased ``run`` in a statement."""
    return sql.SQL("({r}.branch = {d} OR {r}.branch = {none})").format(
        r=sql.Identifier(run), d=default_branch, none=sql.Literal(NO_BRANCH)
    )


def may_be_current_sql(run: str, default_branch: sql.Composable) -> sql.Composed:
    """``may_be_current`` of the run aliased ``run`` in a statement, whose project's default
    branch is ``default_branch``."""
    return sql.SQL("(NOT {r}.probe AND {branch})").format(
        r=sql.Identifier(run), branch=on_default_branch_sql(run, default_branch)
    )


def on_default_branch(run: Run, project: Project) -> bool:
    """``may_be_current`` of one run: it counts toward parity once complete."""
    return may_be_current(probe=run.probe, branch=run.branch, default_branch=project.default_branch)


# The run current at a time: a backend's latest complete run that may be current, by when CI
# started it (then by id), started no later than that time. In SQL ``current_run_at``; as a
# QuerySet ``current_runs`` (latest first: its first is the current run now) and, for the run
# current just before a given run (its baseline), ``current_runs`` filtered by
# ``started_before_q``.
def current_runs(project: Project) -> QuerySet[Run]:
    """The project's runs that may be current and are complete, latest started first: of one
    backend's, the first is its current run."""
    return default_branch_runs(project).filter(complete=True).order_by("-started_at", "-pk")


def started_before_q(started_at: datetime.datetime | F, pk: int | F) -> Q:
    """Runs CI started before the run that started at ``started_at`` with id ``pk``, in the
    order of ``current_runs`` (values, or ``OuterRef`` of an outer run's)."""
    return Q(started_at__lt=started_at) | Q(started_at=started_at, pk__lt=pk)


def current_run_at(
    *, backend: sql.Composable, at: sql.Composable, default_branch: sql.Composable
) -> sql.Composed:
    """The id of the run that was ``backend``'s current run at time ``at`` (of the project
    ``%(project)s``, whose default branch is ``default_branch``): its latest complete run that
    may be current, started no later (NULL: none yet). The current run now is the same with
    ``at`` the latest start (``current_runs``, a QuerySet)."""
    return model_sql(
        "(SELECT x.id FROM {run} x "
        "WHERE x.project_id = %(project)s AND x.backend_id = {backend} AND x.complete "
        "AND {may_be_current} AND x.started_at <= {at} "
        "ORDER BY x.started_at DESC, x.id DESC LIMIT 1)",
        run=Run,
        backend=backend,
        at=at,
        may_be_current=may_be_current_sql("x", default_branch),
    )


def coverage_dropped(
    *, previous: int | None, current: int, infra_lacking: int, percent: float
) -> bool:
    """True when the run has more than ``percent`` % fewer tests than the one before it, that
    one's count taken without ``infra_lacking``: its tests the run lacks in files the run's
    manifest says infrastructure lost (``INFRA_LACKING_SQL``). A crashed shard is a rerun (run
    health), not lost coverage; tests gone from files that ran are. The CI verdict, the engine
    (the backend's state, its snapshot and webhook) and the runs list all judge by this."""
    if not previous:
        return False
    return current < (previous - infra_lacking) * (1 - percent / 100)


# Run health, apart from test health. A test the reference passes that the run lacks because
# infrastructure failed says nothing about the backend: its file crashed or was killed (a job
# that died before writing a test), timed out, reported no test, never started (a lost shard),
# or reported far fewer tests than before (``truncated``: a worker lost mid-file, a report cut
# short). Those gap states are the run manifest's (``RunFile.state``, which the engine and the
# verdict copy into a gap); the score leaves them out and the verdict asks CI to rerun their
# files (docs/run-health.md). An ingest a worker took up more than once (``Upload.attempts``
# > 1) is not among them: an upload's results are written in one transaction or not at all
# (``ingest.pipeline``), so a retried ingest that finished holds every result, and one that
# gave up holds none and is a failed upload, which the verdict names to send again.
INFRA_STATES = (
    GapState.CRASHED,
    GapState.TIMED_OUT,
    GapState.EMPTY,
    GapState.NOT_RUN,
    GapState.TRUNCATED,
)
INFRA = sql.SQL("({})").format(sql.SQL(", ").join(sql.Literal(s.value) for s in INFRA_STATES))
# The run manifest's states of a file whose tests without a result are infrastructure's.
INFRA_FILE_STATES = tuple(RunFileState(s.value) for s in INFRA_STATES)


def is_infra(state: str) -> bool:
    """``INFRA`` of one gap state (or a run manifest file's state)."""
    return state in INFRA_STATES


# ``coverage_dropped``'s ``infra_lacking`` of the run ``%(run)s`` against ``%(previous)s``: the
# previous run's tests that the run has no result for, in files its manifest lists as lost to
# infrastructure. The manifest's files first (none in most runs: one probe of its index), then
# each of their tests by the results' (run, test) index.
INFRA_LACKING_SQL = model_sql(
    """
    SELECT count(*) FROM ({absent}) a
    WHERE NOT EXISTS (SELECT 1 FROM {result} r WHERE r.run_id = %(run)s AND r.test_id = a.test_id)
      AND EXISTS (
          SELECT 1 FROM {result} r WHERE r.run_id = %(previous)s AND r.test_id = a.test_id
      )
    """,
    absent=absent_tests(sql.Placeholder("run")),
    result=Result,
)


def file_truncated(*, previous: int | None, current: int | None, percent: float) -> bool:
    """A file that ran and reported ``current`` tests is truncated when its report held more
    than ``percent`` % fewer than the ``previous`` it held in the backend's last complete run
    (Intel's check, ``Project.truncation_percent``, 5 by default). Unknown counts are not."""
    if not previous or current is None:
        return False
    return current < previous * (1 - percent / 100)


# --- Where a test stands on a backend: one value, every surface reads it ----------------------
# The engine writes each (test, backend)'s current outcome (``CurrentOutcome``), its open gap
# with the triage that applies (``Gap``: state and flags) and whether it is pending
# (``PendingTest``). ``standing`` reads those into the one state every surface shows: the pages,
# the APIs, the exports, the family roll-ups, the triage queue, the verdict and the webhooks,
# none of which classifies on its own. Precedence: a declaration that the test does not apply
# wins (whatever ran), then infrastructure's loss of its file (run health, not the backend's),
# then the gap's own state with its triage.
NOT_APPLICABLE = "not_applicable"
LOST = "lost"  # to infrastructure; ``Standing.cause`` says how (an ``INFRA_STATES`` state)
PENDING_STANDING = "pending"
UNTRACKED, TRACKED, TRACKED_CLOSED, INTENDED = "untracked", "tracked", "tracked_closed", "intended"
# A gap whose test is flaky on the backend over its window of runs (``TestHistory``, issue 46):
# the backend's, scored, but reported as flaky, once, not as an untracked gap opened and closed
# run after run. A triage a person made wins over it.
FLAKY = "flaky"


@dataclass(frozen=True)
class Standing:
    """A test's state on a backend. ``outcome``: passed, skipped, failed, error, missing (a
    reference-passing test its run lacks), pending, lost (``cause``: crashed, timed_out, empty,
    not_run, truncated), not_applicable (``source``: the declaration's, "" when a maintainer
    wrote it), reference_missing, or "" (no result, no gap: nothing to compare). ``triage``, of
    a gap the backend answers for only: untracked, tracked, tracked_closed, intended or flaky
    (its test flips over the window of runs: ``parity.pure.history_states``)."""

    outcome: str
    triage: str = ""
    cause: str = ""
    source: str = ""

    @property
    def is_gap(self) -> bool:
        """A gap of the backend's own (``COUNTED``): neither declared, lost, pending nor
        outside the score."""
        return self.triage != ""

    @property
    def untracked(self) -> bool:
        return self.triage == UNTRACKED

    def scored(self, counts_intended: bool) -> bool:
        """Counted against the backend's score (and a variant "failing" it in a family)."""
        return self.is_gap and (counts_intended or self.triage != INTENDED)

    @property
    def label(self) -> str:
        """As the pages and exports write it."""
        if self.outcome == NOT_APPLICABLE:
            return "not applicable" + (f" ({self.source})" if self.source else "")
        if self.outcome == LOST:
            return f"lost to infrastructure ({self.cause.replace('_', ' ')})"
        if self.triage:
            return f"{self.outcome} · {self.triage.replace('_', ' ')}"
        return self.outcome.replace("_", " ")


def standing(
    *,
    gap_state: str | None,
    outcome: str | None = None,
    pending: bool = False,
    tracked: bool = False,
    intended: bool = False,
    tracked_closed: bool = False,
    not_applicable: bool = False,
    source: str = "",
    flaky: bool = False,
) -> Standing:
    """The ``Standing`` of a test on a backend from the engine's rows: its open gap's state and
    flags (``gap_state`` None: no open gap), its current ``outcome`` (a label: passed, skipped...;
    None: not in the run) and whether it is ``pending``."""
    if gap_state is None:
        return Standing(PENDING_STANDING if pending else outcome or "")
    if not_applicable:
        return Standing(NOT_APPLICABLE, source=source)
    if is_infra(gap_state):
        return Standing(LOST, cause=gap_state)
    if gap_state == GapState.REFERENCE_MISSING:
        return Standing(gap_state)
    if intended:
        triage = INTENDED
    elif tracked_closed:
        triage = TRACKED_CLOSED
    elif tracked:
        triage = TRACKED
    elif flaky:
        triage = FLAKY
    else:
        triage = UNTRACKED
    return Standing(gap_state, triage=triage)


def history_flaky(*, backend: sql.Composable, test: sql.Composable) -> sql.Composed:
    """Whether the test ``test`` is flaky on the backend ``backend`` over its window of runs
    (``TestHistory``, kept by ``parity.engine.history``): what ``Gap.flaky`` says of an open
    gap, for reads that judge a run's own gaps (the verdict)."""
    return model_sql(
        "EXISTS (SELECT 1 FROM {history} h WHERE h.backend_id = {b} AND h.test_id = {t} "
        "AND h.state = {flaky})",
        history=TestHistory,
        b=backend,
        t=test,
        flaky=sql.Literal(HistoryState.FLAKY.value),
    )


# The states of a gap a failure opened (or moved to): only such a gap is held open while its
# test is flaky; a gap of an absent or skipped test is no evidence of flakiness and closes.
HELD_STATES = sql.SQL("({}, {})").format(
    sql.Literal(GapState.FAILED.value), sql.Literal(GapState.ERROR.value)
)


def gap_held(
    *, gap: str, backend: sql.Composable, test: sql.Composable, flaky: bool = True
) -> sql.Composed:
    """Whether the open gap aliased ``gap`` of ``test`` on ``backend``, no longer a gap of the
    current runs, is **held** open (issue 46): a gap a failure opened, whose test passes now
    on the backend and on the reference (``%(reference)s``) and is flaky on the backend over its
    window (``history_flaky``). A flaky test reads flaky once, its gap open until the test
    leaves the state, not opened and closed with each flip. ``flaky`` False: the same gap whose
    test has left flaky (it is released: closed by the run that made it leave). Only a project
    keeping states from history (``%(history)s``) holds any: for the others the planner folds
    ``false AND ...`` away and the close statements read no more than before."""
    passes = (
        "EXISTS (SELECT 1 FROM {current} c WHERE c.backend_id = {b} AND c.test_id = {t}"
        " AND c.outcome = %(passed)s)"
    )
    return sql.SQL(
        "(%(history)s AND {g}.state IN {held} AND {flaky} AND {here} AND {there})"
    ).format(
        g=sql.Identifier(gap),
        held=HELD_STATES,
        flaky=history_flaky(backend=backend, test=test)
        if flaky
        else sql.SQL("NOT {}").format(history_flaky(backend=backend, test=test)),
        here=model_sql(passes, current=CurrentOutcome, b=backend, t=test),
        there=model_sql(passes, current=CurrentOutcome, b=sql.Placeholder("reference"), t=test),
    )


def gap_held_over(*, backend: sql.Composable, test: sql.Composable) -> sql.Composed:
    """Whether a gap of ``test`` on ``backend`` was open when the baseline run (started at
    ``%(baseline_started_at)s``) was current though it passed the test: a held gap
    (``gap_held``), so the run failing the test again opens none (the CI gate lists a flaky test
    once, when its gap opened). Only asked where the project keeps states from history
    (``%(history)s``) and the run has a baseline (``%(has_baseline)s``)."""
    return model_sql(
        "(%(history)s AND %(has_baseline)s AND EXISTS (SELECT 1 FROM {gap} g "
        "WHERE g.backend_id = {b} AND g.test_id = {t} AND g.opened_at <= %(baseline_started_at)s "
        "AND (g.closed_at IS NULL OR g.closed_at > %(baseline_started_at)s)))",
        gap=Gap,
        b=backend,
        t=test,
    )


# --- A test's state from its history over a window of runs (issue 46) --------------------------
# The engine judges each followed (test, backend) (``TestHistory``, ``parity.engine.history``):
# flaky, broken or neither. Every surface reads that one row, and only while the project keeps
# states from history: a project that turned them off keeps the windows of before, stale, and
# they read as none. A gap reads flaky (``standing``) by ``Gap.flaky``, which the engine sets from
# the same row; broken is no triage: a broken test's gap stays untracked, tracked..., the state
# beside it says since when it fails steadily.
HISTORY_BROKEN = HistoryState.BROKEN.value
HISTORY_FLAKY = HistoryState.FLAKY.value


# The engine's reads of the windows (``parity.engine.history``), shared with the settings page's
# preview (``parity.selectors.history_settings``), which judges the same windows under new rules.
# The backend's runs in the window before this one (they count as passes of a test followed
# from its first failure now: it had no failure in them, or it would be followed already).
HISTORY_EARLIER_SQL = model_sql(
    """
    SELECT count(*) FROM (
        SELECT 1 FROM {run} x JOIN {project} p ON p.id = x.project_id
        WHERE x.project_id = %(project)s AND x.backend_id = %(backend)s AND x.complete
          AND {may_be_current} AND x.started_at >= %(cutoff)s
          AND (x.started_at, x.id) < (%(at)s, %(run)s)
        LIMIT %(window_runs)s
    ) w
    """,
    run=Run,
    project=Project,
    may_be_current=may_be_current_sql("x", model_sql("p.default_branch")),
)

# The followed tests' windows, read as what the judging needs: the outcomes, how many of the
# newest entries are in the window (``keep``: the rules' runs, none older than their days; the
# entries are oldest first), and whether those hold both outcomes at one commit. Arrays stay in
# the database: a window's commits and times are looked at there only, and only where it can
# matter (an old entry, both outcomes).
HISTORY_FOLLOWED_SQL = model_sql(
    """
    SELECT h.id, h.test_id, h.outcomes, h.passes_before, h.state, k.keep,
           CASE WHEN strpos(right(h.outcomes, k.keep), 'P') > 0
                 AND strpos(right(h.outcomes, k.keep), 'F') > 0 THEN EXISTS (
               SELECT 1
               FROM unnest(h.commits[cardinality(h.commits) - k.keep + 1:],
                           string_to_array(right(h.outcomes, k.keep), NULL)) e(sha, o)
               GROUP BY e.sha HAVING count(DISTINCT e.o) > 1
           ) ELSE false END AS same_commit
    FROM {history} h
    CROSS JOIN LATERAL (SELECT least(length(h.outcomes), %(window_runs_all)s::int) AS n) n
    CROSS JOIN LATERAL (
        SELECT CASE WHEN h.ats[cardinality(h.ats) - n.n + 1] >= %(cutoff)s THEN n.n
                    ELSE (SELECT count(*) FROM unnest(h.ats[cardinality(h.ats) - n.n + 1:]) a
                          WHERE a >= %(cutoff)s)::int END AS keep
    ) k
    WHERE h.backend_id = %(backend)s
    """,
    history=TestHistory,
)


def history_window_params(*, run: Run, rules: HistoryRules) -> dict:
    """The parameters of the window reads (``HISTORY_EARLIER_SQL``, ``HISTORY_FOLLOWED_SQL``)
    at ``run``, its backend's current run, under ``rules``."""
    return {
        **OUTCOME_PARAMS,
        "project": run.project_id,
        "backend": run.backend_id,
        "run": run.pk,
        "commit": run.commit,
        "at": run.started_at,
        "cutoff": run.started_at - datetime.timedelta(days=rules.window_days),
        "window_runs": max(rules.window_runs - 1, 0),
        "window_runs_all": rules.window_runs,
    }


def history_kept(project: Project) -> bool:
    """Whether ``project`` keeps states from history (``history_rules``' ``enabled``): off,
    no surface reads a window."""
    return bool((project.history_rules or {}).get("enabled"))


@dataclass(frozen=True)
class HistoryStanding:
    """A (test, backend)'s state from history as the surfaces show it: ``state`` (flaky or
    broken), ``since`` when and ``since_commit`` at which commit (broken: the first run of the
    failing streak it is in; flaky: the run that judged it so), and its window's ``runs``,
    ``failures``, ``flips`` and ``rank`` (the Wilson lower bound of its failure rate)."""

    state: str
    since: datetime.datetime | None
    since_commit: str
    runs: int
    failures: int
    flips: int
    rank: float

    @property
    def label(self) -> str:
        """As the pages write it."""
        when = f" since {self.since:%Y-%m-%d %H:%M}" if self.since else ""
        at = f" ({self.since_commit[:10]})" if self.since_commit else ""
        if self.state == HISTORY_BROKEN:
            return f"broken: failing steadily{when}{at}"
        return f"flaky: {self.flips} flips in {self.runs} runs, {self.failures} failed{when}{at}"


def history_standing(row: TestHistory) -> HistoryStanding | None:
    """The ``HistoryStanding`` of a ``TestHistory`` row (None: neither flaky nor broken). A
    broken test fails steadily since the first failure of the streak its window ends with."""
    if row.state not in (HISTORY_FLAKY, HISTORY_BROKEN):
        return None
    at, commit = row.since, ""
    if row.state == HISTORY_BROKEN:
        streak = len(row.outcomes) - len(row.outcomes.rstrip("F"))
        first = len(row.outcomes) - streak
        if streak and first < len(row.ats):
            at = row.ats[first]
            commit = row.commits[first] if first < len(row.commits) else ""
    elif row.since is not None and row.since in row.ats:
        index = row.ats.index(row.since)
        commit = row.commits[index] if index < len(row.commits) else ""
    return HistoryStanding(
        state=row.state,
        since=at,
        since_commit=commit,
        runs=row.runs,
        failures=row.failures,
        flips=row.flips,
        rank=row.rank,
    )


def history_standings(
    *, project: Project, backend_ids: list[int] | None = None, test_ids: list[int] | None = None
) -> dict[tuple[int, int], HistoryStanding]:
    """(backend id, test id) -> its ``HistoryStanding``, for the followed tests of ``project``
    in a state (of ``backend_ids``, of ``test_ids``; None: any). One query; none when the project
    keeps no states from history."""
    if not history_kept(project):
        return {}
    rows = TestHistory.objects.filter(project=project).exclude(state=HistoryState.NONE)
    if backend_ids is not None:
        rows = rows.filter(backend_id__in=backend_ids)
    if test_ids is not None:
        rows = rows.filter(test_id__in=test_ids)
    found = {}
    for row in rows.only(
        "backend_id", "test_id", "outcomes", "commits", "ats", "state", "since", "runs",
        "failures", "flips", "rank",
    ):  # fmt: skip
        shown = history_standing(row)
        if shown is not None:
            found[row.backend_id, row.test_id] = shown
    return found


def history_state_expr(prefix: str = "") -> Coalesce:
    """A gap row's test's state from history on its backend (flaky, broken or ""), as an
    expression over gap rows (``prefix``: a lookup to them): for a project that keeps them
    (``history_kept``) only."""
    return Coalesce(
        Subquery(
            TestHistory.objects.filter(
                backend_id=OuterRef(f"{prefix}backend_id"), test_id=OuterRef(f"{prefix}test_id")
            ).values("state")[:1]
        ),
        Value(""),
    )


def reads_flaky_q(prefix: str = "") -> Q:
    """Open gaps that read flaky (``standing``'s triage ``flaky``): counted (``counted_q``),
    flaky, neither tracked nor intended; a heatmap cell's flaky count (``FileGapCount.flaky``,
    kept by the triggers of migration 0057, which spell this in SQL)."""
    return counted_q(prefix) & Q(
        **{f"{prefix}flaky": True, f"{prefix}tracked": False, f"{prefix}intended": False}
    )


def gap_standing(gap: Gap | None, *, outcome: str | None = None, pending: bool = False) -> Standing:
    """``standing`` of an open ``Gap`` row (None: none), its triage selected or not (a
    declaration's source is read from it only when it is)."""
    if gap is None:
        return standing(gap_state=None, outcome=outcome, pending=pending)
    source = ""
    if gap.not_applicable and Gap.triage.is_cached(gap):
        source = gap.triage.source if gap.triage else ""
    return standing(
        gap_state=gap.state,
        outcome=outcome,
        tracked=gap.tracked,
        intended=gap.intended,
        tracked_closed=gap.tracked_closed,
        not_applicable=gap.not_applicable,
        source=source,
        flaky=gap.flaky,
    )


# ``Standing.is_gap`` in SQL, of gap rows (``prefix``: their alias and a dot, or ""): the gaps a
# score counts, the queue lists and the families' "fails on" names. ``counted_q`` as a Q.
def counted_sql(prefix: str = "") -> sql.Composed:
    p = sql.SQL(prefix)
    return sql.SQL(
        "({p}state <> {reference_missing} AND NOT {p}not_applicable AND {p}state NOT IN {infra})"
    ).format(p=p, reference_missing=REFERENCE_MISSING, infra=INFRA)


def counted_q(prefix: str = "") -> Q:
    outside = [GapState.REFERENCE_MISSING.value, *(s.value for s in INFRA_STATES)]
    return Q(**{f"{prefix}not_applicable": False}) & ~Q(**{f"{prefix}state__in": outside})
