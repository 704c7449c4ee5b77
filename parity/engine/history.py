"""States from history, kept per run (issue 46, item 1): when a backend's current run moves,
each test it follows (``TestHistory``) takes the run's outcome into its window, a test failing
in the run is followed from then on, and each followed test is judged again by
``parity.pure.history_states``. A run where nearly every test failed is infrastructure's: no
window takes it. Then the open gaps of flaky tests are marked ``flaky`` (reported as flaky,
never as untracked: ``parity.definitions.standing``). A flaky test's gap is held open while
the test passes (``parity.definitions.gap_held``, in the diff's close) and closed here once the
test leaves flaky: one gap reading flaky, not one opened and closed per failure.

**Invariant:** a step reads and writes the followed tests of one backend (those that failed in
its window) and the run's failures, in a few set-based statements; a backend whose tests pass
costs one aggregate. The judging is Python over the followed tests alone.
"""

import logging
from dataclasses import dataclass

from django.db import connection
from psycopg2 import sql

from parity.definitions import (
    HISTORY_EARLIER_SQL,
    HISTORY_FOLLOWED_SQL,
    OUTCOME_PARAMS,
    gap_held,
    history_window_params,
    may_be_current_sql,
    outcome_first,
)
from parity.models import (
    CurrentOutcome,
    FlakyChange,
    Gap,
    HistoryState,
    Project,
    Result,
    Run,
    TestHistory,
)
from parity.models.sql import model_sql
from parity.pure.history_states import (
    FLAKY,
    NONE,
    HistoryRules,
    run_is_infra,
    window_judge,
)

logger = logging.getLogger(__name__)

# How many of the run's tests failed: the followed tests' failures, and the run's new failures
# (a test failing now that is not followed: its outcome changed since the backend's last run,
# ``parity_outcome_changes``, or it would be followed already). Both are small sets; the run's
# whole outcomes are not read.
_TALLY_SQL = model_sql(
    """
    SELECT (SELECT count(*) FROM {history} h JOIN {current} c
              ON c.backend_id = %(backend)s AND c.test_id = h.test_id
            WHERE h.backend_id = %(backend)s AND c.outcome IN (%(failed)s, %(error)s)),
           (SELECT count(*) FROM parity_outcome_changes x
            WHERE x.outcome IN (%(failed)s, %(error)s) AND NOT EXISTS (
                SELECT 1 FROM {history} h WHERE h.backend_id = %(backend)s AND h.test_id = x.test_id
            ))
    """,
    history=TestHistory,
    current=CurrentOutcome,
)

# (``passes_before``: ``leading`` is a keyword of Postgres's.)
# Followed tests take the run's outcome (a skip or an absence is no evidence); the run's new
# failures are followed from now on.
_APPEND_SQL = model_sql(
    """
    UPDATE {history} h
    SET outcomes = h.outcomes || CASE WHEN c.outcome = %(passed)s THEN 'P' ELSE 'F' END,
        commits = h.commits || %(commit)s::varchar, ats = h.ats || %(at)s::timestamptz
    FROM {current} c
    WHERE h.backend_id = %(backend)s AND c.backend_id = %(backend)s AND c.test_id = h.test_id
      AND c.outcome IN (%(passed)s, %(failed)s, %(error)s);
    INSERT INTO {history} (project_id, backend_id, test_id, outcomes, commits, ats, passes_before,
                           state, runs, failures, flips, rank)
    SELECT %(project)s, %(backend)s, x.test_id, 'F', ARRAY[%(commit)s::varchar],
           ARRAY[%(at)s::timestamptz], %(leading)s, '', 0, 0, 0, 0
    FROM parity_outcome_changes x
    WHERE x.outcome IN (%(failed)s, %(error)s)
      AND NOT EXISTS (
          SELECT 1 FROM {history} h WHERE h.backend_id = %(backend)s AND h.test_id = x.test_id
      );
    """,
    history=TestHistory,
    current=CurrentOutcome,
)

# An earlier run of the backend at this run's commit, in the window (a run again of one commit,
# in a fresh process): the tests followed from now on that passed there have both outcomes at
# one commit, which their window must hold (it holds no entry of a run before it otherwise).
_SAME_COMMIT_SQL = model_sql(
    """
    SELECT x.id, x.started_at FROM {run} x JOIN {project} p ON p.id = x.project_id
    WHERE x.project_id = %(project)s AND x.commit = %(commit)s AND x.backend_id = %(backend)s
      AND x.complete AND {may_be_current} AND x.started_at >= %(cutoff)s
      AND (x.started_at, x.id) < (%(at)s, %(run)s)
    ORDER BY x.started_at DESC, x.id DESC LIMIT 1
    """,
    run=Run,
    project=Project,
    may_be_current=may_be_current_sql("x", model_sql("p.default_branch")),
)
_SAME_COMMIT_PASSED_SQL = model_sql(
    """
    UPDATE {history} h
    SET outcomes = 'P' || h.outcomes, commits = %(commit)s::varchar || h.commits,
        ats = %(same_at)s::timestamptz || h.ats,
        passes_before = greatest(h.passes_before - 1, 0)
    WHERE h.backend_id = %(backend)s AND h.outcomes = 'F' AND h.ats = ARRAY[%(at)s::timestamptz]
      AND (SELECT r.outcome FROM {result} r WHERE r.run_id = %(same)s AND r.test_id = h.test_id
           ORDER BY {first} LIMIT 1) = %(passed)s
    """,
    history=TestHistory,
    result=Result,
    first=outcome_first(),
)

# Each judged row: its window cut to the newest ``keep`` entries, and its new judgement.
_JUDGED_SQL = model_sql(
    """
    UPDATE {history} h
    SET outcomes = right(h.outcomes, j.keep),
        commits = h.commits[cardinality(h.commits) - j.keep + 1:],
        ats = h.ats[cardinality(h.ats) - j.keep + 1:],
        passes_before = j.lead, state = j.state,
        since = CASE WHEN j.state = h.state THEN h.since ELSE %(at)s END,
        runs = j.runs, failures = j.failures, flips = j.flips, rank = j.rank
    FROM unnest(%(ids)s::bigint[], %(keep)s::int[], %(leading)s::int[], %(state)s::varchar[],
                %(runs)s::int[], %(failures)s::int[], %(flips)s::int[], %(rank)s::float8[])
         AS j(id, keep, lead, state, runs, failures, flips, rank)
    WHERE h.id = j.id;
    DELETE FROM {history} WHERE id = ANY(%(forget)s::bigint[]);
    """,
    history=TestHistory,
)

# The gaps held open while their test was flaky (``gap_held``) whose test left flaky with this
# run and passes now: closed by the run, as the diff closes any gap (it could not: a nightly's
# or a reference's diff covers the tests that changed there, not one that only left a state).
# One that fails now stays open, a plain gap (the mark below clears its flag).
_RELEASE_SQL = model_sql(
    """
    UPDATE {gap} g SET is_open = false, closed_run_id = %(run)s, closed_at = %(at)s
    WHERE g.project_id = %(project)s AND g.is_open AND g.flaky AND g.backend_id = ANY(%(backends)s)
      AND {released}
    """,
    gap=Gap,
    released=gap_held(
        gap="g", backend=sql.SQL("g.backend_id"), test=sql.SQL("g.test_id"), flaky=False
    ),
)

# The open gaps of flaky tests are flaky; the others are not (any longer).
_MARK_SQL = model_sql(
    """
    UPDATE {gap} g SET flaky = true FROM {history} h
    WHERE h.project_id = %(project)s AND h.state = %(flaky)s AND h.backend_id = ANY(%(backends)s)
      AND g.backend_id = h.backend_id AND g.test_id = h.test_id AND g.is_open AND NOT g.flaky;
    UPDATE {gap} g SET flaky = false
    WHERE g.project_id = %(project)s AND g.is_open AND g.flaky
      AND g.backend_id = ANY(%(backends)s)
      AND NOT EXISTS (
          SELECT 1 FROM {history} h
          WHERE h.backend_id = g.backend_id AND h.test_id = g.test_id AND h.state = %(flaky)s
      );
    """,
    gap=Gap,
    history=TestHistory,
)


@dataclass(frozen=True)
class HistoryMoved:
    """What a run did to its backend's windows: ``infra`` (left out), tests ``followed`` after
    it, and how many ``entered`` and ``left`` a state."""

    infra: bool
    followed: int = 0
    entered: int = 0
    left: int = 0


def history_update(*, run: Run, total: int, rules: HistoryRules) -> HistoryMoved:
    """``run`` became its backend's current run (its outcomes are the backend's
    ``CurrentOutcome`` rows, ``total`` of them; how they moved, ``parity_outcome_changes``): its
    outcomes enter the windows, and the followed tests are judged again."""
    params = history_window_params(run=run, rules=rules)
    with connection.cursor() as cursor:
        cursor.execute(_TALLY_SQL, params)
        failed = sum(cursor.fetchone())
        if run_is_infra(failed=failed, total=total, rules=rules):
            logger.info("run %s left out of the history: %s of %s failed", run.pk, failed, total)
            return HistoryMoved(infra=True)
        cursor.execute(HISTORY_EARLIER_SQL, params)
        earlier = cursor.fetchone()[0]
        cursor.execute(_APPEND_SQL, {**params, "leading": earlier})
        cursor.execute(_SAME_COMMIT_SQL, params)
        same = cursor.fetchone()
        if same is not None:
            cursor.execute(_SAME_COMMIT_PASSED_SQL, {**params, "same": same[0], "same_at": same[1]})
    found = _judge_followed(run=run, params=params, earlier=earlier, rules=rules)
    logger.info("history of backend %s after run %s: %s", run.backend_id, run.pk, found)
    return found


def history_rejudge(*, run: Run, rules: HistoryRules) -> HistoryMoved:
    """The project's rules changed (``parity.services.history_settings``): the windows its
    backend's current run ``run`` left are judged again under ``rules`` as that run judged them
    (and cut to the new window); a move into or out of flaky is recorded with the run."""
    params = history_window_params(run=run, rules=rules)
    with connection.cursor() as cursor:
        cursor.execute(HISTORY_EARLIER_SQL, params)
        earlier = cursor.fetchone()[0]
    found = _judge_followed(run=run, params=params, earlier=earlier, rules=rules)
    logger.info("history of backend %s judged again under new rules: %s", run.backend_id, found)
    return found


def _judge_followed(*, run: Run, params: dict, earlier: int, rules: HistoryRules) -> HistoryMoved:
    """The backend's followed tests judged at ``run`` and stored; moves into and out of flaky
    recorded."""
    with connection.cursor() as cursor:
        cursor.execute(HISTORY_FOLLOWED_SQL, params)
        rows = cursor.fetchall()
        judged, moved = _judge(rows, earlier=earlier, rules=rules)
        changes = judged.pop("flaky_changes")
        cursor.execute(_JUDGED_SQL, {**judged, "at": run.started_at})
    FlakyChange.objects.bulk_create(
        FlakyChange(
            project_id=run.project_id,
            backend_id=run.backend_id,
            test_id=test_id,
            run_id=run.pk,
            at=run.started_at,
            entered=entered,
            rank=rank,
        )
        for test_id, entered, rank in changes
    )
    return HistoryMoved(infra=False, followed=len(judged["ids"]), **moved)


def _judge(
    rows: list[tuple], *, earlier: int, rules: HistoryRules
) -> tuple[dict[str, list], dict[str, int]]:
    """The followed tests' windows (``HISTORY_FOLLOWED_SQL``'s rows) judged; a test whose
    window holds no failure and no state is forgotten."""
    judged: dict[str, list] = {
        k: [] for k in ("ids", "keep", "leading", "state", "runs", "failures", "flips", "rank")
    }
    judged["forget"] = []
    judged["flaky_changes"] = []  # (test, entered flaky or left it, rank)
    moved = {"entered": 0, "left": 0}
    for pk, test_id, outcomes, leading, was, keep, same_commit in rows:
        window, leading, found = window_judge(
            outcomes,
            keep=keep,
            passes_before=leading,
            earlier=earlier,
            same_commit=same_commit,
            rules=rules,
        )
        if found.state != was:
            moved["entered" if found.state != NONE else "left"] += 1
        if (found.state == FLAKY) != (was == FLAKY):
            judged["flaky_changes"].append((test_id, found.state == FLAKY, found.rank))
        if found.state == NONE and "F" not in window:
            judged["forget"].append(pk)
            continue
        for key, value in (
            ("ids", pk),
            ("keep", keep),
            ("leading", leading),
            ("state", found.state),
            ("runs", found.runs),
            ("failures", found.failures),
            ("flips", found.flips),
            ("rank", found.rank),
        ):
            judged[key].append(value)
    return judged, moved


def history_mark_gaps(
    *, project_id: int, backend_ids: list[int], cause: Run, reference_id: int | None
) -> int:
    """After the diff of ``backend_ids`` (its events carrying ``cause``): the held gaps whose
    test left flaky and passes now are closed (``_RELEASE_SQL``); then the open gaps whose test
    is flaky there are marked so, no others. Returns how many gaps were closed."""
    params = {
        **OUTCOME_PARAMS,
        "project": project_id,
        "backends": backend_ids,
        "flaky": HistoryState.FLAKY.value,
        "run": cause.pk,
        "at": cause.started_at,
        "reference": reference_id,
        "history": True,
    }
    with connection.cursor() as cursor:
        cursor.execute(_RELEASE_SQL, params)
        released = cursor.rowcount
        cursor.execute(_MARK_SQL, params)
    if released:
        logger.info(
            "%s held gaps of backends %s released by run %s", released, backend_ids, cause.pk
        )
    return released


def history_forget(*, backend_id: int) -> None:
    """A backend retired (no current run) forgets its windows."""
    TestHistory.objects.filter(backend_id=backend_id).delete()


# A project that turned states from history off: no gap reads flaky (the windows stay, stale,
# and read as none).
_UNMARK_SQL = model_sql(
    "UPDATE {gap} g SET flaky = false WHERE g.project_id = %(project)s AND g.is_open AND g.flaky",
    gap=Gap,
)


def history_unmark_gaps(*, project_id: int) -> int:
    """States from history turned off: the open gaps read flaky no longer. Returns how many."""
    with connection.cursor() as cursor:
        cursor.execute(_UNMARK_SQL, {"project": project_id})
        return cursor.rowcount
