"""The CI verdict of one run: which gaps it opens and closes against its backend's current run
before it (the baseline), and whether CI should pass.

Computed on request from the run's own results, the baseline run's and the reference's current
outcomes (the same rules as the engine, from ``parity.definitions``), so it works for a run
that is not complete or not yet current (a pull request's run, or one whose recompute is still
queued). Its cost depends on the size of the two runs, not on history.

- A gap of the run: a test passing on the reference's current run that is skipped, failed or
  errored in the run, or absent from it. Absent counts only once the run is complete: shards of
  an incomplete run may still come, and never for a test the reference first ran after the
  run started (``pending``: not yet run there). For the reference backend itself, the
  baseline plays the reference: the run's gaps are tests that passed on the baseline and no
  longer pass.
- Opened: a gap of the run that was no gap of the baseline, nor held open over it (a flaky
  test's gap, ``parity.definitions.gap_held_over``: the gate lists a flaky test once).
  Closed: a gap of the baseline that the run no longer has (a test absent from an incomplete
  run is not known to be fixed).
- Uncovered: a gap of the run that was a gap of the baseline too, that a triage covered for the
  baseline and none covers now: a conditioned exemption that lapsed (``rocm < 7.14``, and the
  run is at 7.14 with the test still failing), one that expired since the baseline's day, or
  one a maintainer removed (deleted, or a declaration set aside) since the baseline started
  (``parity.result_reads.uncovered_causes``). Untracked now, as an opened one is
  (docs/variants.md, "Lapses").
- ``ok`` is false when the run opens or uncovers an untracked gap or, complete, has more than
  ``PARITY_COVERAGE_DROP_PERCENT`` % fewer tests than the baseline (the whole run's verdict
  only: one scoped to some files, a suite's, judges their gaps).
- A tracked gap whose every cited issue is closed at the tracker is ``tracked_closed``; a
  project with ``closed_issues_untracked`` counts it untracked (``tracked`` false), so a skip
  citing a fixed bug fails CI until someone looks again.
- Triage is read as it is now, and a conditioned exemption applies where its condition holds
  for the run's own attributes: ``parity.result_reads.exemptions_applied``, which also says
  which exemptions were added or removed since the run's CI fetched its list.
- Files and uploads infrastructure lost are no gaps: run health names them to run again
  (``parity.result_reads.run_health``, the verdict's ``rerun``).
- A probe run (exempted tests ran too) is never a gate: its verdict is ok, whatever it opens.
- A run whose uploads name suites gates (``gates``) only when one of them is blocking on its
  backend (``SuiteSummary.tier``, docs/suites.md "Tiers"); a mapped informing or broken suite's
  verdict reports its ``ok`` and does not fail CI. A run naming no suite, or a suite the
  project's map does not claim, gates as before.
- The opened gaps are listed a page at a time (a first run opens tens of thousands), in the
  order CI prints them: untracked first (a tracked gap whose issues are all closed first among
  the tracked, or with the untracked when the project counts it so), then tracked, then
  intended, each by test; the counts are of every gap, listed or not.
"""

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime

from django.conf import settings
from psycopg2 import sql

from parity.definitions import (
    FLAKY,
    INFRA,
    OUTCOME_PARAMS,
    PENDING,
    absent_tests,
    cited_issues_closed,
    coverage_dropped,
    current_runs,
    first_ran_after,
    first_ran_between,
    gap,
    gap_held_over,
    history_flaky,
    is_infra,
    on_default_branch,
    reason_has_issue,
    run_outcomes,
    started_before_q,
    triage_picks,
)
from parity.models import (
    CurrentOutcome,
    HistoryState,
    Reason,
    Result,
    Run,
    TestCase,
    TestHistory,
    Triage,
    TriageKind,
)
from parity.models.parity import KINDS_WITH_ISSUE
from parity.models.sql import model_sql
from parity.plans import (
    FENCE,
    HASH_JOINS_UNTIL_COMMIT,
    MERGE_JOINS_UNTIL_COMMIT,
    SORTS_IN_MEMORY_UNTIL_COMMIT,
)
from parity.pure.history_states import HistoryRules
from parity.read_replica import read_cursor
from parity.result_reads import uncovered_causes as causes
from parity.result_reads.exemptions_applied import (
    ExemptionsApplied,
    conditioned_triages,
    exemptions_applied,
    lapsed_triages,
    run_attributes,
    triage_added_after,
)
from parity.result_reads.run_health import Rerun, VerdictFile, run_health
from parity.selectors.fragments import all_closed, issue_infos
from parity.selectors.manifest import exemption_reason
from parity.selectors.suites import SuiteTier, run_suite_tiers


@dataclass(frozen=True)
class VerdictGap:
    test: str
    test_id: int
    backend: str
    state: str
    reason: str | None
    issues: list[str]
    triage: str | None
    tracked: bool
    intended: bool
    tracked_closed: bool  # an issue tracks it, and every issue it cites is closed
    exemption: int | None  # the triage that applies (an exemption or a reason's triage)
    exemption_added: bool  # that triage was added after the run's exemption list
    infra: bool = False  # its file's infrastructure failed (``INFRA_STATES``): rerun, not a gap


@dataclass(frozen=True)
class UncoveredGap:
    """A gap of the run and of its baseline that a triage covered for the baseline and no
    longer covers for the run: untracked now."""

    test: str
    test_id: int
    state: str
    reason: str | None
    exemption: int  # the triage that covered it for the baseline (a removed one's id too)
    kind: str  # that triage's kind
    condition: str  # its condition, which does not hold for the run ("" unless lapsed)
    # Why none covers it now (``uncovered_causes``): lapsed, expired or removed, and as said:
    # "condition rocm < 7.14 no longer holds", "expired 2026-12-01", "removed by alice on ...".
    cause: str = "lapsed"
    why: str = ""


@dataclass(frozen=True)
class ExemptedGaps:
    """The opened gaps one exemption (a triage) tracks or intends, or, without one, one reason
    citing an issue tracks: counted over every opened gap, listed or not, so CI prints one line
    for them instead of a row per test."""

    exemption: int | None  # the triage's id; None: a reason's issue tracks them
    match: str | None  # the exemption's pattern or test; None for a reason's triage
    kind: str | None  # tracked, intended, quarantine; None: a reason's issue
    reason: str | None  # the exemption's reason (its note), or the skip reason's text
    issues: list[str]
    tracked: bool
    intended: bool
    tracked_closed: bool
    exemption_added: bool  # the exemption was added after the run's exemption list
    gaps: int


@dataclass(frozen=True)
class ClosedGap:
    test: str
    test_id: int
    was: str  # its gap state in the baseline run
    reason: str | None  # the baseline's reason
    issues: list[str]


@dataclass(frozen=True)
class ShardScope:
    shard: str  # "2/4", as the client named it
    files: int  # the shard's files the verdict judged


@dataclass(frozen=True)
class Verdict:
    run: int
    backend: str
    complete: bool
    baseline_run: int | None
    baseline_started_at: datetime | None
    ok: bool
    opened: dict[str, int]  # tracked, untracked, intended, tracked_closed, flaky
    closed: int
    coverage_drop: bool
    test_count: int
    baseline_test_count: int | None
    gaps: list[VerdictGap]  # the gaps the run opened: a page of them, untracked first
    exempted: list[ExemptedGaps]  # every opened gap not untracked, one entry per exemption
    probe: bool
    exemptions: ExemptionsApplied
    ci_url: str
    closed_gaps: list[ClosedGap]  # the first ``closed_limit`` it closes, by test (none asked: [])
    # Asked for: the baseline's tests the run lacks, as (the baseline's upload that first had
    # them, file, tests); empty without a baseline.
    lacking: list[tuple[int, str, int]]
    branch: str  # the run's ('' if CI sent none)
    rerun: Rerun  # run health: the files and uploads infrastructure lost, to run again
    default_branch: str  # the project's: only its complete runs (and branchless ones) count
    counts_toward_parity: bool  # it may become its backend's current run (no probe)
    # Gaps the baseline had covered that the run has uncovered (a lapse), by test.
    uncovered: list[UncoveredGap] = field(default_factory=list)
    # A shard's verdict of a run not complete yet: it judged that shard's files only
    # (``parity.result_reads.shard_verdict``); None: the whole run.
    scope: "ShardScope | None" = None
    # The suites its uploads name, each with its tier on the run's backend (docs/suites.md).
    suites: list[SuiteTier] = field(default_factory=list)
    # Whether ``ok`` gates CI: its suites are blocking there (or it names none). An informing
    # or broken suite reports: its verdict says ok or not, and CI passes either way.
    gates: bool = True

    @property
    def gaps_total(self) -> int:
        """The gaps the run opened, listed in ``gaps`` or not (infrastructure's too)."""
        opened = self.opened
        return (
            opened["tracked"]
            + opened["untracked"]
            + opened["intended"]
            + opened["infra"]
            + opened.get("flaky", 0)
        )

    @property
    def healthy(self) -> bool:
        """No file or upload infrastructure failed (``rerun`` says which); a probe always is."""
        return self.probe or self.rerun.healthy

    @property
    def unrun_files(self) -> list[VerdictFile]:
        return self.rerun.unrun_files


def _prefix(is_reference: bool, has_baseline: bool, *, scoped: bool = True) -> sql.Composed:
    """The statement's first CTEs: the run's outcomes (x), the baseline's (p), the run's tests
    of files that did not run (a), each compared test with whether it is a gap of the run and
    of the baseline (j), the gaps the run closes with their state and reason in the baseline,
    and the baseline's tests the run lacks. ``scoped`` (with a baseline): only the tests whose
    gap-ness can differ are compared (``_SCOPED``)."""
    if scoped and has_baseline:
        scope, compared = _SCOPED[is_reference]
        lacking = "SELECT test_id FROM d WHERE xo IS NULL AND po IS NOT NULL"  # in p, not in x
    else:
        scope, compared = sql.SQL(""), _EVERY[is_reference]
        lacking = (
            "SELECT test_id FROM p EXCEPT SELECT test_id FROM x"
            if has_baseline
            # Nothing to lack; Postgres would still hash the run's outcomes to find it (all of a
            # first run's).
            else "SELECT NULL::bigint AS test_id WHERE false"
        )
    return sql.SQL(
        """
        WITH x AS ({x}), p AS ({p}), a AS ({absent}), {scope}
        -- is_gx, a gap of the run; is_gp, a gap of the baseline: the test's gap there
        -- (``parity.definitions.gap``: x's ``xo``, p's ``po``), unless pending (the reference
        -- first ran it after that run started: its ``since``). One absent from an incomplete
        -- run is no gap yet: it may still come.
        j AS (
            SELECT g.test_id, g.state, g.reason_id, g.in_run, g.po, g.pr,
                   coalesce(g.state <> {pending} AND (g.in_run OR %(complete)s), false)
                       AS is_gx,
                   coalesce(g.was <> {pending}, false) AND %(has_baseline)s AS is_gp
            FROM (
                SELECT t.test_id, {state} AS state, {was} AS was, t.xr AS reason_id,
                       t.xo IS NOT NULL AS in_run, t.po, t.pr
                FROM ({compared}) t LEFT JOIN a ON a.test_id = t.test_id
            ) g
        ),
        closed AS ({closed}),
        lacking_tests AS ({lacking})
        """
    ).format(
        closed=sql.SQL(
            "SELECT test_id, po, pr FROM j WHERE is_gp AND NOT is_gx AND (%(complete)s OR in_run)"
            if has_baseline
            # Without a baseline nothing closes; j then has one reader (the opened gaps), so
            # Postgres folds it into theirs instead of storing every test the reference passes
            # first.
            else "SELECT NULL::bigint AS test_id, NULL::smallint AS po, NULL::bigint AS pr"
            " WHERE false"
        ),
        x=run_outcomes("run"),
        p=run_outcomes("baseline"),
        scope=scope,
        compared=compared,
        lacking=sql.SQL(lacking),
        state=gap(
            sql.SQL("t.xo"),
            absent=sql.SQL("a.state"),
            pending=first_ran_after(sql.SQL("t.since"), sql.Placeholder("started_at")),
        ),
        was=gap(
            sql.SQL("t.po"),
            pending=first_ran_after(sql.SQL("t.since"), sql.Placeholder("baseline_started_at")),
        ),
        pending=PENDING,
        absent=absent_tests(sql.Placeholder("run")),
    )


# Every test the reference passes (on the reference backend, its baseline plays the reference),
# joined once to the run and the baseline: two joins of the reference's 97k at 4 x 100k tests.
_EVERY_SQL = """
    SELECT r.test_id, r.since, x.outcome AS xo, x.reason_id AS xr, p.outcome AS po,
           p.reason_id AS pr
    FROM {reference} r LEFT JOIN x ON x.test_id = r.test_id LEFT JOIN p ON p.test_id = r.test_id
    WHERE r.outcome = %(passed)s
    """
_EVERY = {
    False: model_sql(
        _EVERY_SQL,
        reference=model_sql(
            "(SELECT test_id, outcome, since FROM {current} WHERE backend_id = %(reference)s)",
            current=CurrentOutcome,
        ),
    ),
    True: model_sql(
        _EVERY_SQL,
        reference=sql.SQL("(SELECT test_id, outcome, NULL::timestamptz AS since FROM p)"),
    ),
}

# A run and its baseline (a nightly and the night before) agree on nearly every test, and a
# test's gap-ness in each depends only on its outcome there (passing or not, or absent) and,
# absent, on whether the reference first ran it after that run started (pending). So only these
# can be a gap of one and not the other (d): the tests in one run only or passing in one only
# (one join of the two runs' outcomes), and, the run complete (an incomplete run's absent tests
# are no gaps), those both lack that the reference first ran between the two runs' starts
# (each probed in the two runs by the results' (run, test) index: they are few). Then each is
# probed on the reference by its (backend, test) index. That replaces two joins of the
# reference's 97k (bench/pages_bench.py --big: a nightly run's page and verdict). d's rows in the
# baseline only are the tests the run lacks, and each row carries the baseline's outcome and
# reason a closed gap shows: neither needs another join of the baseline's 90k.
_SCOPE_SQL = """
    d AS MATERIALIZED (
        SELECT coalesce(x.test_id, p.test_id) AS test_id, x.outcome AS xo, x.reason_id AS xr,
               p.outcome AS po, p.reason_id AS pr
        FROM x FULL JOIN p ON p.test_id = x.test_id
        WHERE x.test_id IS NULL OR p.test_id IS NULL
           OR (x.outcome = %(passed)s) <> (p.outcome = %(passed)s)
        {pending}
    ),
    """
_SCOPE_PENDING_SQL = """
        UNION ALL
        SELECT c.test_id, NULL, NULL, NULL, NULL FROM {current} c
        WHERE c.backend_id = %(reference)s AND %(complete)s
          AND {first_ran_between}
          AND NOT EXISTS (
              SELECT 1 FROM {result} r WHERE r.run_id = %(run)s AND r.test_id = c.test_id {fence}
          )
          AND NOT EXISTS (
              SELECT 1 FROM {result} r
              WHERE r.run_id = %(baseline)s AND r.test_id = c.test_id {fence}
          )
    """
_SCOPED_COMPARED_SQL = """
    SELECT d.test_id, r.since, d.xo, d.xr, d.po, d.pr
    FROM d CROSS JOIN LATERAL (  -- fenced: one probe of the reference per test
        SELECT c.outcome, c.since FROM {current} c
        WHERE c.backend_id = %(reference)s AND c.test_id = d.test_id {fence}
    ) r
    WHERE r.outcome = %(passed)s
    """
_SCOPED = {
    False: (
        model_sql(
            _SCOPE_SQL,
            pending=model_sql(
                _SCOPE_PENDING_SQL,
                current=CurrentOutcome,
                result=Result,
                fence=FENCE,
                first_ran_between=first_ran_between(
                    sql.SQL("c.since"),
                    sql.SQL("least(%(started_at)s, %(baseline_started_at)s)"),
                    sql.SQL("greatest(%(started_at)s, %(baseline_started_at)s)"),
                ),
            ),
        ),
        model_sql(_SCOPED_COMPARED_SQL, current=CurrentOutcome, fence=FENCE),
    ),
    # The reference's own run: its baseline plays the reference, which has no ``since``.
    True: (
        model_sql(_SCOPE_SQL, pending=sql.SQL("")),
        sql.SQL(
            "SELECT test_id, NULL::timestamptz AS since, xo, xr, po, pr FROM d"
            " WHERE po = %(passed)s"
        ),
    ),
}


# Continues the prefix's WITH. One statement, so the run's, the baseline's and the reference's
# outcomes are read once (each read of a nightly run's is a large part of its verdict,
# bench/pages_bench.py --big): one row has the counts, the first closed gaps, what the run
# lacks and how many opened gaps have each (reason, triage, kind) (as JSON, decoded once: on
# every row, decoding took longer than the query); each other row one gap of the page of gaps
# it opens (``gaps_limit`` from ``gaps_offset``), with the triage it gets. {opened}: the opened
# gaps with their tests' keys (``_OPENED_PROBED`` or ``_OPENED_JOINED``).
_VERDICT_SQL = """
    , o AS ({opened}), picked AS MATERIALIZED ({picks}),
    og AS MATERIALIZED (
        -- A test flaky on the backend is reported flaky, not untracked (its kind, without
        -- a triage of its own).
        SELECT o.test_id, o.state, o.reason_id, t.triage_id,
               coalesce(t.kind, CASE WHEN {flaky} THEN {flaky_kind} END) AS kind,
               {reason_issue} AS reason_issue, o.test_key
        FROM o LEFT JOIN picked t ON t.test_id = o.test_id
        -- A test declared not applicable here is no gap CI answers for.
        WHERE t.kind IS DISTINCT FROM 'not_applicable'
    ), listed AS (
        -- The page of opened gaps, in CI's order: untracked (0), tracked by closed issues only
        -- (%(closed_order)s: 0 where the project counts them untracked), tracked (2), intended
        -- (3), then those of files infrastructure failed (4: run health, not test health); the
        -- issue lookups run only for the tracked (CASE takes one branch).
        SELECT og.*,
               CASE WHEN og.state IN {infra} THEN 4
                    WHEN og.kind IN ('intended', {flaky_kind}) THEN 3
                    WHEN coalesce(og.kind IN ('tracked', 'quarantine'), false) OR og.reason_issue
                    THEN CASE WHEN {all_closed} THEN %(closed_order)s ELSE 2 END
                    ELSE 0 END AS listed_order
        FROM og
        ORDER BY listed_order, og.test_key
        LIMIT %(gaps_limit)s OFFSET %(gaps_offset)s
    ),
    cl AS MATERIALIZED (
        SELECT c.test_id, c.key, {was} AS was, c.pr AS reason_id
        FROM (
            SELECT closed.*,
                   (SELECT tc.key FROM {testcase} tc WHERE tc.id = closed.test_id) AS key
            FROM closed
        ) c
        ORDER BY c.key
        LIMIT %(closed_limit)s
    ),
    lacking AS (
        -- Asked for: the baseline's tests the run lacks, per (the baseline's upload that first
        -- had the test, file); each looked up by index, as they are few beside the run's.
        SELECT (
            SELECT r.upload_id FROM {result} r
            WHERE r.run_id = %(baseline)s AND r.test_id = m.test_id ORDER BY r.id LIMIT 1
        ) AS upload_id, (SELECT t.file FROM {testcase} t WHERE t.id = m.test_id) AS file,
        count(*) AS tests
        FROM lacking_tests m
        WHERE %(lacking)s
        GROUP BY 1, 2
    ), n AS (
        SELECT
            (SELECT count(*) FROM closed) AS closed,
            (SELECT count(*) FROM x) AS tests,
            (SELECT count(*) FROM p) AS baseline_tests,
            -- ``coverage_dropped``'s infra_lacking (``INFRA_LACKING_SQL``'s count): the
            -- baseline's tests the run lacks in files run health names. Of the few the run
            -- lacks, not of every test of either run.
            (SELECT count(*) FROM lacking_tests l WHERE l.test_id IN (SELECT a.test_id FROM a))
                AS infra_lacking,
            (SELECT json_agg(json_build_array(test_id, key, was, reason_id) ORDER BY key)
             FROM cl) AS closed_rows,
            (SELECT json_agg(json_build_array(upload_id, file, tests)) FROM lacking)
                AS lacking_rows,
            (SELECT json_agg(json_build_array(reason_id, triage_id, kind, reason_issue, infra, n))
             FROM (SELECT reason_id, triage_id, kind, reason_issue, state IN {infra} AS infra,
                          count(*) AS n
                   FROM og GROUP BY 1, 2, 3, 4, 5) kinds) AS kinds
    )
    SELECT n.closed, n.tests, n.baseline_tests, n.closed_rows, n.lacking_rows, n.kinds,
           n.infra_lacking, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
    FROM n
    UNION ALL
    SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, g.*
    FROM listed g
    """
# The opened gaps' keys (a gap held open while its flaky test passed is not opened again:
# ``gap_held_over``). A run with a baseline opens a few hundred gaps: each key is looked up
# by the tests' primary key. A run without one (a backend's first) opens every gap it has, tens
# of thousands: one join with the project's tests (merged, ``_FIRST_RUN_PLAN_SETTINGS``) costs
# less than that many lookups, and more than a nightly run's few (bench/README.md).
_OPENED_PROBED = """
    SELECT %(backend)s::bigint AS backend_id, j.test_id, j.state, j.reason_id,
           (SELECT tc.key FROM {testcase} tc WHERE tc.id = j.test_id) AS test_key,
           (SELECT tc.file FROM {testcase} tc WHERE tc.id = j.test_id) AS test_file
    FROM j
    WHERE j.is_gx AND NOT j.is_gp AND NOT {held}
      AND (%(scope_files)s::text[] IS NULL
           OR (SELECT tc.file FROM {testcase} tc WHERE tc.id = j.test_id) = ANY(%(scope_files)s))
    """
_OPENED_JOINED = """
    SELECT %(backend)s::bigint AS backend_id, j.test_id, j.state, j.reason_id,
           tc.key AS test_key, tc.file AS test_file
    FROM j JOIN {testcase} tc ON tc.id = j.test_id AND tc.project_id = %(project)s
    WHERE j.is_gx AND NOT j.is_gp AND NOT {held}
      AND (%(scope_files)s::text[] IS NULL OR tc.file = ANY(%(scope_files)s))
    """


# Whether an opened gap's reason cites an issue: ``reason_has_issue``'s rule, but as one hashed
# set of the reasons with issues rather than a lookup per gap (a first run's tens of thousands
# of lookups cost more than the hash). A gap without a reason: NULL, so false.
_REASON_ISSUE = "coalesce(o.reason_id IN (SELECT ri.reason_id FROM {reason_issues} ri), false)"


def _verdict_sql(opened: str) -> sql.Composed:
    return model_sql(
        _VERDICT_SQL,
        opened=model_sql(
            opened,
            testcase=TestCase,
            held=gap_held_over(backend=sql.Placeholder("backend"), test=sql.SQL("j.test_id")),
        ),
        testcase=TestCase,
        result=Result,
        reason_issue=model_sql(_REASON_ISSUE, reason_issues=Reason.issues.through),
        picks=triage_picks("o", "test_id", lapsed=sql.Placeholder("lapsed")),
        all_closed=cited_issues_closed(sql.SQL("og.reason_id"), sql.SQL("og.triage_id")),
        was=gap(sql.SQL("c.po")),
        infra=INFRA,
        # Only a project keeping states from history asks (the planner drops ``false AND``).
        flaky=sql.SQL("({} AND {})").format(
            sql.Placeholder("history"),
            history_flaky(backend=sql.Placeholder("backend"), test=sql.SQL("o.test_id")),
        ),
        flaky_kind=sql.Literal(FLAKY),
    )


# Each run's outcomes are its results deduplicated by a sort, in memory (``parity.plans``),
# and its joins hashed, until the end of the transaction.
_PLAN_SETTINGS = HASH_JOINS_UNTIL_COMMIT + sql.SQL("; ") + SORTS_IN_MEMORY_UNTIL_COMMIT
# A first run's gaps join the run's outcomes, the reference's and the tests, all by test id,
# tens of thousands each: merged in test id order (the reference's and the tests' indexes give
# it) they cost less than hashed (the planner hashes the reference's rows and the project's
# tests, wide with their keys), though the triage picks and their join back then sort the gaps
# (bench/README.md).
_FIRST_RUN_PLAN_SETTINGS = MERGE_JOINS_UNTIL_COMMIT + sql.SQL("; ") + SORTS_IN_MEMORY_UNTIL_COMMIT

_VERDICT_PROBED, _VERDICT_JOINED = _verdict_sql(_OPENED_PROBED), _verdict_sql(_OPENED_JOINED)


def baseline_run_pick(*, run: Run) -> Run | None:
    """The backend's current run as it was before ``run``: its latest complete default-branch
    run that CI ran earlier."""
    return (
        current_runs(run.project)
        .filter(started_before_q(run.started_at, run.pk), backend_id=run.backend_id)
        .exclude(pk=run.pk)
        .first()
    )


def run_verdict(
    *,
    run: Run,
    gaps_limit: int | None = None,
    gaps_offset: int = 0,
    closed_limit: int = 0,
    lacking: bool = False,
    files: list[str] | None = None,
) -> Verdict:
    """``gaps_limit`` and ``gaps_offset``: list only that many opened gaps (None: all), from
    that one on, in CI's order (untracked first, then by test); the counts are of every one
    either way. ``closed_limit``: list the first that many gaps it closes (by test), with the
    reason and issues each had in the baseline. ``lacking``: say which of the baseline's tests
    the run lacks (``Verdict.lacking``). ``files``: count and list only the opened gaps of
    tests in these files (a shard's, ``shard_verdict``); None: every file's."""
    project, backend = run.project, run.backend
    baseline = baseline_run_pick(run=run)
    conditioned = conditioned_triages(project_id=run.project_id)
    params = {
        **_params(run, baseline, conditioned),
        "closed_limit": closed_limit,
        "lacking": lacking,
        "gaps_limit": gaps_limit,
        "gaps_offset": gaps_offset,
        "closed_order": 0 if project.closed_issues_untracked else 1,
        "scope_files": files,
    }
    prefix = _prefix(backend.pk == project.reference_backend_id, baseline is not None)
    with read_cursor(atomic=True) as cursor:
        cursor.execute(_PLAN_SETTINGS if baseline else _FIRST_RUN_PLAN_SETTINGS)
        verdict_sql = _VERDICT_PROBED if baseline else _VERDICT_JOINED
        cursor.execute(prefix + verdict_sql, params)
        rows = cursor.fetchall()
    (
        closed,
        test_count,
        baseline_count,
        closed_rows,
        lacking_rows,
        kinds,
        infra_lacking,
    ) = next(row[:7] for row in rows if row[7] is None)
    opened_rows = [row[7:] for row in rows if row[7] is not None]
    applied, listed_ids = exemptions_applied(run=run)
    opened, gaps, exempted = _verdict_gaps(
        opened_rows,
        kinds or [],
        backend=backend.name,
        closed_untracked=project.closed_issues_untracked,
        added_after=triage_added_after(run=run, listed_ids=listed_ids),
    )
    # Coverage is the whole run's: a verdict scoped to some files (a shard's, a suite's)
    # judges their gaps, and the run's own verdict its coverage.
    drop = (
        run.complete
        and files is None
        and coverage_dropped(
            previous=baseline_count if baseline else None,
            current=test_count,
            infra_lacking=infra_lacking,
            percent=settings.PARITY_COVERAGE_DROP_PERCENT,
        )
    )
    health = run_health(run=run)
    tiers = run_suite_tiers(run=run)
    uncovered = [] if baseline is None else _uncovered(run, baseline, params, conditioned)
    opened["uncovered"] = len(uncovered)
    return Verdict(
        run=run.pk,
        backend=backend.name,
        complete=run.complete,
        baseline_run=baseline.pk if baseline else None,
        baseline_started_at=baseline.started_at if baseline else None,
        ok=run.probe or (opened["untracked"] == 0 and not uncovered and not drop),
        rerun=health,
        opened=opened,
        closed=closed,
        coverage_drop=drop,
        test_count=test_count,
        baseline_test_count=baseline_count if baseline else None,
        gaps=gaps,
        exempted=exempted,
        probe=run.probe,
        exemptions=applied,
        ci_url=run.ci_url,
        closed_gaps=_closed_gaps(closed_rows or []),
        lacking=[(upload, file, tests) for upload, file, tests in lacking_rows or []],
        branch=run.branch,
        default_branch=project.default_branch,
        counts_toward_parity=on_default_branch(run, project),
        uncovered=uncovered,
        suites=tiers.suites,
        gates=tiers.gates,
    )


# The gaps of the run that were gaps of its baseline (and are the backend's own: not lost to
# infrastructure), each with the triage that applies for the run's attributes today (``now``)
# and for the baseline's on its day (``then``, so one expired since still applies): uncovered
# where one applied then and none now, and no issue of its reason tracks it (which would track
# it either way). With ``removals`` (a triage was removed since the baseline started), those
# none covers now with no triage then too, for ``uncovered_causes`` to match to the removed.
# Every compared test is read (a scoped read leaves out the gaps both runs share, which these
# are), so it runs only when some triage applies differently for the two (``_uncovered``).
_UNCOVERED_SQL = """
    , kept AS MATERIALIZED (
        SELECT %(backend)s::bigint AS backend_id, j.test_id, j.state, j.reason_id,
               tc.key AS test_key, tc.file AS test_file
        FROM j JOIN {testcase} tc ON tc.id = j.test_id
        WHERE j.is_gx AND j.is_gp AND j.state NOT IN {infra}
    ), picked_now AS ({now}), picked_then AS ({then})
    SELECT k.test_id, k.test_key, k.state, k.reason_id, w.triage_id, w.kind
    FROM kept k LEFT JOIN picked_then w ON w.test_id = k.test_id AND w.triage_id IS NOT NULL
    WHERE (w.triage_id IS NOT NULL OR %(removals)s) AND NOT EXISTS (
        SELECT 1 FROM picked_now n WHERE n.test_id = k.test_id AND n.triage_id IS NOT NULL
    )
      AND NOT {reason_issue}
    ORDER BY k.test_key
    """
_UNCOVERED = model_sql(
    _UNCOVERED_SQL,
    testcase=TestCase,
    infra=INFRA,
    now=triage_picks("kept", "test_id", lapsed=sql.Placeholder("lapsed")),
    then=triage_picks(
        "kept",
        "test_id",
        lapsed=sql.Placeholder("baseline_lapsed"),
        in_force_on=sql.Placeholder("baseline_day"),
    ),
    reason_issue=reason_has_issue(sql.SQL("k.reason_id")),
)


def run_uncovered(*, run: Run) -> list[UncoveredGap]:
    """``Verdict.uncovered`` alone (the ``untracked_gaps`` webhook's and the digest's): a query
    or three when no triage applies differently for the run and its baseline."""
    baseline = baseline_run_pick(run=run)
    if baseline is None:
        return []
    conditioned = conditioned_triages(project_id=run.project_id)
    return _uncovered(run, baseline, _params(run, baseline, conditioned), conditioned)


def _uncovered(
    run: Run, baseline: Run, params: dict, conditioned: list[tuple[int, str]]
) -> list[UncoveredGap]:
    """The gaps the baseline had covered that the run uncovers (``_UNCOVERED_SQL``). No query
    of results when every triage applies alike for both (most runs): no conditioned one applies
    differently for the two runs' attributes, none expired since the baseline's day, and none
    was removed since it started."""
    baseline_lapsed = lapsed_triages(run=baseline, conditioned=conditioned)
    lapses = set(baseline_lapsed) != set(params["lapsed"])
    removals = causes.removals_since(project_id=run.project_id, baseline=baseline)
    if not (
        lapses or removals or causes.expired_since(project_id=run.project_id, baseline=baseline)
    ):
        return []
    prefix = _prefix(run.backend_id == run.project.reference_backend_id, True, scoped=False)
    day = causes.baseline_day(baseline)
    with read_cursor(atomic=True) as cursor:
        cursor.execute(_PLAN_SETTINGS)
        cursor.execute(
            prefix + _UNCOVERED,
            {
                **params,
                "baseline_lapsed": baseline_lapsed,
                "baseline_day": day,
                "removals": bool(removals),
            },
        )
        rows = cursor.fetchall()
    reasons = Reason.objects.in_bulk({row[3] for row in rows if row[3] is not None})
    triages = Triage.objects.in_bulk({row[4] for row in rows if row[4] is not None})
    then_attributes = run_attributes(baseline) if removals else {}
    found = []
    for test_id, key, state, reason_id, triage_id, kind in rows:
        triage = triages.get(triage_id)
        if triage_id is None:  # no triage then: one removed since, or none
            removal = causes.removal_covering(
                removals, backend=run.backend, test_id=test_id, key=key, reason_id=reason_id,
                day=day, attributes=then_attributes,
            )  # fmt: skip
            if removal is None:
                continue
            cause, triage_id, kind = causes.removal_cause(removal), removal.triage_id, removal.kind
        else:
            cause = causes.triage_cause(triage, lapsed=set(params["lapsed"]))
        found.append(
            UncoveredGap(
                test=key,
                test_id=test_id,
                state=state,
                reason=reasons[reason_id].text if reason_id in reasons else None,
                exemption=triage_id,
                kind=kind,
                condition=triage.condition if triage and cause.cause == causes.LAPSED else "",
                cause=cause.cause,
                why=cause.why,
            )
        )
    # A test flaky on the backend reads flaky, not untracked (``standing``): no exemption's
    # end uncovers it.
    flaky = (
        set(
            TestHistory.objects.filter(
                backend_id=run.backend_id,
                test_id__in=[g.test_id for g in found],
                state=HistoryState.FLAKY,
            ).values_list("test_id", flat=True)
        )
        if found and params["history"]
        else set()
    )
    return [g for g in found if g.test_id not in flaky]


def _closed_gaps(rows: list[list]) -> list[ClosedGap]:
    """The closed gaps listed, from the statement's JSON rows: test id, key, state, reason id.
    One query for their reasons and issues (none when there are no reasons)."""
    reasons = Reason.objects.prefetch_related("issues").in_bulk(
        {row[3] for row in rows if row[3] is not None}
    )
    closed = []
    for test_id, key, was, reason_id in rows:
        reason = reasons.get(reason_id)
        issues = issue_infos(reason=reason, triage=None)
        closed.append(
            ClosedGap(
                test=key,
                test_id=test_id,
                was=was,
                reason=reason.text if reason else None,
                issues=list(dict.fromkeys(issue.ref for issue in issues)),
            )
        )
    return closed


def _params(run: Run, baseline: Run | None, conditioned: list[tuple[int, str]]) -> dict:
    """The statement's parameters; ``conditioned``: the project's conditioned triages."""
    return {
        **OUTCOME_PARAMS,
        "project": run.project_id,
        "backend": run.backend_id,
        "reference": run.project.reference_backend_id,
        "run": run.pk,
        "started_at": run.started_at,
        "baseline": baseline.pk if baseline else None,
        "baseline_started_at": baseline.started_at if baseline else None,
        "has_baseline": baseline is not None,
        "complete": run.complete,
        "lapsed": lapsed_triages(run=run, conditioned=conditioned),
        "history": HistoryRules.of(run.project.history_rules).enabled,
    }


def _verdict_gaps(
    rows: list[tuple],
    kinds: list[list],
    *,
    backend: str,
    closed_untracked: bool,
    added_after: Callable[[Triage], bool],
) -> tuple[dict[str, int], list[VerdictGap], list[ExemptedGaps]]:
    """The opened counts, from how many gaps have each (reason, triage, kind, reason has an
    issue): a gap's tracking follows from those alone, so it is worked out once per such
    combination (a handful), not per gap (a first run opens tens of thousands). The gaps
    of ``rows``, in the order the statement listed them. And the gaps not untracked, per
    exemption (``_exempted_gaps``)."""
    reasons = Reason.objects.prefetch_related("issues").in_bulk(
        {kind[0] for kind in kinds if kind[0] is not None}
    )
    triages = Triage.objects.select_related("issue", "test").in_bulk(
        {kind[1] for kind in kinds if kind[1] is not None}
    )
    tracking: dict[tuple, tuple[bool, bool, bool, list[str]]] = {}
    opened = dict.fromkeys(
        ("tracked", "untracked", "intended", "tracked_closed", "infra", "uncovered", "flaky"), 0
    )
    for reason_id, triage_id, kind, reason_issue, infra, n in kinds:
        tracking[(reason_id, triage_id, kind, reason_issue)] = _tracking(
            reasons.get(reason_id), triages.get(triage_id), kind, reason_issue, closed_untracked
        )
        if infra:  # run health's: the verdict's rerun, not a gap of the backend
            opened["infra"] += n
            continue
        tracked, intended, tracked_closed, _issues = tracking[
            (reason_id, triage_id, kind, reason_issue)
        ]
        if kind == FLAKY and not (tracked or intended):  # flaky over its window: not untracked
            opened["flaky"] += n
            continue
        opened["tracked"] += n * tracked
        opened["untracked"] += n * (not tracked and not intended)
        opened["intended"] += n * intended
        opened["tracked_closed"] += n * tracked_closed
    listed = sorted(rows, key=lambda row: (row[7], row[6]))  # the statement's order
    gaps = []
    for test_id, state, reason_id, triage_id, kind, reason_issue, key, _order in listed:
        reason, triage = reasons.get(reason_id), triages.get(triage_id)
        tracked, intended, tracked_closed, issues = tracking[
            (reason_id, triage_id, kind, reason_issue)
        ]
        gaps.append(
            VerdictGap(
                test=key,
                test_id=test_id,
                backend=backend,
                state=state,
                reason=reason.text if reason else None,
                issues=issues,
                triage=kind,
                tracked=tracked,
                intended=intended,
                tracked_closed=tracked_closed,
                exemption=triage_id,
                exemption_added=triage is not None and added_after(triage),
                infra=is_infra(state),
            )
        )
    exempted = _exempted_gaps(kinds, tracking, reasons, triages, added_after)
    return opened, gaps, exempted


def _exempted_gaps(
    kinds: list[list],
    tracking: dict[tuple, tuple[bool, bool, bool, list[str]]],
    reasons: dict[int, Reason],
    triages: dict[int, Triage],
    added_after: Callable[[Triage], bool],
) -> list[ExemptedGaps]:
    """The opened gaps that are not untracked, one entry per triage (or, with none, per
    reason whose issue tracks them), most gaps first."""
    groups: dict[tuple, ExemptedGaps] = {}
    for reason_id, triage_id, kind, reason_issue, infra, n in kinds:
        if infra:
            continue
        tracked, intended, tracked_closed, issues = tracking[
            (reason_id, triage_id, kind, reason_issue)
        ]
        if not (tracked or intended):
            continue
        key = ("triage", triage_id) if triage_id is not None else ("reason", reason_id)
        group = groups.get(key) or _exempted_group(
            triages.get(triage_id), reasons.get(reason_id), kind, added_after
        )
        groups[key] = replace(
            group,
            issues=list(dict.fromkeys([*group.issues, *issues])),
            tracked=group.tracked or tracked,
            intended=group.intended or intended,
            tracked_closed=(group.tracked_closed or not group.gaps) and tracked_closed,
            gaps=group.gaps + n,
        )
    return sorted(groups.values(), key=lambda g: (-g.gaps, g.match or g.reason or ""))


def _exempted_group(
    triage: Triage | None,
    reason: Reason | None,
    kind: str | None,
    added_after: Callable[[Triage], bool],
) -> ExemptedGaps:
    """An empty group of the triage's gaps, or of the reason's when no triage applies."""
    if triage is None:
        match, text = None, reason.text if reason else None
    else:
        match = triage.test.key if triage.test is not None else triage.match or None
        # A reason's triage covers that reason's gaps: its text says more than a default.
        covers_reason = triage.reason_id is not None and not triage.note and reason is not None
        text = reason.text if covers_reason else exemption_reason(triage)
    return ExemptedGaps(
        exemption=triage.pk if triage else None,
        match=match,
        kind=kind,
        reason=text,
        issues=[],
        tracked=False,
        intended=False,
        tracked_closed=False,
        exemption_added=triage is not None and added_after(triage),
        gaps=0,
    )


def _tracking(
    reason: Reason | None,
    triage: Triage | None,
    kind: str | None,
    reason_issue: bool,
    closed_untracked: bool,
) -> tuple[bool, bool, bool, list[str]]:
    """Whether a gap with this reason, triage and kind is tracked, intended, tracked by closed
    issues only, and the issues it cites."""
    intended = kind == TriageKind.INTENDED
    # As the engine: a tracked or quarantine triage tracks it, or its reason's issue does.
    tracked = not intended and (kind in KINDS_WITH_ISSUE or bool(reason_issue))
    issues = issue_infos(reason=reason, triage=triage)
    tracked_closed = tracked and all_closed(issues)
    return (
        tracked and not (tracked_closed and closed_untracked),
        intended,
        tracked_closed,
        list(dict.fromkeys(issue.ref for issue in issues)),
    )
