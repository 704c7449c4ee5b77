"""The engine's triage steps: pick each open gap's triage and mark triages no gap matches.

Run by every recompute (``parity.engine.recompute``) and, after a maintainer's triage change,
by ``triages_refresh`` (called from the triage services in ``parity.services.triage``), so the
change shows at once rather than at the next run.
"""

from django.db import connection
from psycopg2 import sql

from parity.definitions import (
    TRIAGE_UNEXPIRED,
    cited_issues_closed,
    reason_has_issue,
    triage_candidates,
    triage_picks,
)
from parity.engine.snapshots import snapshots_write
from parity.models import (
    Backend,
    BackendState,
    DeclaredNotPassed,
    Gap,
    Project,
    TestCase,
    Triage,
)
from parity.models.sql import model_sql


def triages_refresh(*, project: Project) -> None:
    """After a triage change: re-pick every open gap's triage and recount current snapshots.
    The caller holds the project lock."""
    backend_ids = list(project.backends.values_list("pk", flat=True))
    triages_apply(project_id=project.pk, backend_ids=backend_ids)
    reference_run_id = (
        BackendState.objects.filter(backend_id=project.reference_backend_id)
        .values_list("current_run_id", flat=True)
        .first()
    )
    snapshots_write(project=project, backend_ids=backend_ids, reference_run_id=reference_run_id)
    triages_mark_stale(project_id=project.pk)  # after the snapshots: see ``_STALE_SQL``


# Tracked: an issue links the gap (its tracked or quarantine triage) or its reason. Intended and
# not applicable: its triage says so; such a gap is never counted tracked or untracked. Tracked
# but closed: every issue it cites is closed at the tracker (``parity.services.issue_sync`` keeps
# the states). The issue lookups run only where they can matter (CASE evaluates the branch it
# takes): most gaps of a first completion are missing tests, with no reason and no triage. Such
# a gap (settled:
# no triage, no flag, no reason) keeps its flags unless a triage applies now, so the pick
# leaves it out then (a first completion's 52k gaps were each sorted, flagged and looked up
# again by the update, to change a few thousand).
_APPLY_SQL = """
    WITH o AS (
        SELECT g.id, g.backend_id, g.test_id, g.reason_id, tc.key AS test_key,
               tc.file AS test_file,
               g.triage_id IS NULL
                   AND NOT (g.intended OR g.tracked OR g.tracked_closed OR g.not_applicable)
                   AND g.reason_id IS NULL AS settled
        FROM {gap} g JOIN {testcase} tc ON tc.id = g.test_id
        WHERE g.is_open AND g.project_id = %(project)s AND {which}
    ), picked AS MATERIALIZED ({picks}), flagged AS (
        SELECT t.id, t.triage_id, t.reason_id,
               coalesce(t.kind = 'intended', false) AS intended,
               coalesce(t.kind = 'not_applicable', false) AS not_applicable,
               coalesce(t.kind NOT IN ('intended', 'not_applicable'), true)
                   AND (coalesce(t.kind IN ('tracked', 'quarantine'), false)
                        OR CASE WHEN t.reason_id IS NULL THEN false ELSE {reason_issue} END)
                   AS tracked
        FROM picked t
    )
    UPDATE {gap} g
    SET triage_id = p.triage_id, intended = p.intended, tracked = p.tracked,
        tracked_closed = p.tracked_closed, not_applicable = p.not_applicable
    FROM (
        SELECT t.id, t.triage_id, t.intended, t.tracked, t.not_applicable,
               CASE WHEN t.tracked THEN {all_closed} ELSE false END AS tracked_closed
        FROM flagged t
    ) p
    WHERE g.id = p.id
      AND (g.triage_id, g.intended, g.tracked, g.tracked_closed, g.not_applicable)
          IS DISTINCT FROM (p.triage_id, p.intended, p.tracked, p.tracked_closed,
                            p.not_applicable)
    """


def _apply_sql(which: str) -> sql.Composed:
    return model_sql(
        _APPLY_SQL,
        which=sql.SQL(which),
        gap=Gap,
        testcase=TestCase,
        picks=triage_picks("o", "id", untriaged=sql.SQL("NOT r.settled")),
        reason_issue=reason_has_issue(sql.SQL("t.reason_id")),
        all_closed=cited_issues_closed(sql.SQL("t.reason_id"), sql.SQL("t.triage_id")),
    )


_APPLY_BACKENDS_SQL = _apply_sql("g.backend_id = ANY(%(backends)s)")
_APPLY_TOUCHED_SQL = _apply_sql("g.id IN (SELECT id FROM parity_gaps_touched)")


def triages_apply(*, project_id: int, backend_ids: list[int]) -> None:
    """Point each open gap of ``backend_ids`` at the triage that applies to it, and set its
    tracked, intended and tracked_closed flags from that triage and its reason's issues."""
    with connection.cursor() as cursor:
        cursor.execute(_APPLY_BACKENDS_SQL, {"project": project_id, "backends": backend_ids})


def triages_apply_touched(*, project_id: int) -> None:
    """``triages_apply`` for the gaps the recompute's diff just opened or gave another reason
    (``parity.engine.gaps``): no other gap can need another triage, since each change of a
    triage (the triage services), an expiry (``triages_expire``) or a cited issue's state
    (the issue sync) re-applies triages itself, and a reason's issues are linked when the
    reason is first seen. A nightly run changes a few hundred gaps of its tens of thousands."""
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE parity_gaps_touched")
        # Most nightlies touch no gap at all: the statement would find nothing, at the cost of
        # planning it, which costs more than the small diffs it usually follows.
        cursor.execute(_ANY_TOUCHED_SQL)
        if cursor.fetchone()[0]:
            cursor.execute(_APPLY_TOUCHED_SQL, {"project": project_id})


_ANY_TOUCHED_SQL = "SELECT EXISTS (SELECT 1 FROM parity_gaps_touched)"


# Covering: the triages some open gap matches (expired and lapsed ones too: a lapse's gaps that
# still fail make it lapsed, not stale), those an open gap picked (the
# same, when every gap was matched; enough alone for the shortcut below), and those applying on a
# backend with no current run yet: nothing has shown they match nothing there. A family whose
# runs go to its variants (rocm: rocm-gfx942) is not such a backend: its variants' gaps tell.
# And the declarations an agreement score uses on tests the reference did not pass, as the
# backends' snapshots last found them (``DeclaredNotPassed``: so this runs after those).
_STALE_SQL = """
    WITH o AS (
        SELECT g.id, g.backend_id, g.test_id, g.reason_id, tc.key AS test_key,
               tc.file AS test_file
        FROM {gap} g JOIN {testcase} tc ON tc.id = g.test_id
        WHERE g.is_open AND g.project_id = %(project)s AND {which}
    ), covering AS MATERIALIZED (
        SELECT c.triage_id FROM ({candidates}) c
        UNION
        SELECT g.triage_id FROM {gap} g
        WHERE g.is_open AND g.project_id = %(project)s AND g.triage_id IS NOT NULL
        UNION
        SELECT t.id FROM {triage} t
        JOIN {backend} b ON b.project_id = t.project_id
        LEFT JOIN {backendstate} bs ON bs.backend_id = b.id
        WHERE t.project_id = %(project)s AND bs.current_run_id IS NULL
          AND NOT EXISTS (SELECT 1 FROM {backend} v WHERE v.family_id = b.id)
          AND (NOT EXISTS (SELECT 1 FROM {on_backend} tb WHERE tb.triage_id = t.id)
               OR EXISTS (SELECT 1 FROM {on_backend} tb
                          WHERE tb.triage_id = t.id AND tb.backend_id = b.id))
        UNION
        SELECT d.triage_id FROM {declared_not_passed} d WHERE d.project_id = %(project)s
    )
    UPDATE {triage} u SET stale = s.stale, expired = s.expired
    FROM (
        SELECT t.id, NOT {unexpired} AS expired,
               NOT EXISTS (SELECT 1 FROM covering c WHERE c.triage_id = t.id) AS stale
        FROM {triage} t WHERE t.project_id = %(project)s
    ) s
    WHERE u.id = s.id AND (u.stale, u.expired) IS DISTINCT FROM (s.stale, s.expired)
    """


def _stale_sql(which: str) -> sql.Composed:
    return model_sql(
        _STALE_SQL,
        which=sql.SQL(which),
        triage=Triage,
        gap=Gap,
        testcase=TestCase,
        backend=Backend,
        backendstate=BackendState,
        on_backend=Triage.backends.through,
        declared_not_passed=DeclaredNotPassed,
        candidates=triage_candidates("o", "id", unexpired=False, lapses=False),
        unexpired=TRIAGE_UNEXPIRED,
    )


_STALE_ALL_SQL = _stale_sql("true")
_STALE_TOUCHED_SQL = _stale_sql("g.id IN (SELECT id FROM parity_gaps_touched)")
# Covering from the open gaps' picks alone: no gap matched at all.
_STALE_PICKED_SQL = _stale_sql("false")

# Unpicked: a triage that was not stale but that no open gap picks (one a more specific triage
# shadows on every gap it matches, or an expired one) nor an agreement score uses: only the
# match of every open gap can tell whether it still matches one. Stale: a triage the touched
# gaps may match again.
_TRIAGES_STATE_SQL = model_sql(
    """
    SELECT
        EXISTS (
            SELECT 1 FROM {triage} t
            WHERE t.project_id = %(project)s AND NOT t.stale
              AND NOT EXISTS (SELECT 1 FROM {gap} g WHERE g.triage_id = t.id AND g.is_open)
              AND NOT EXISTS (SELECT 1 FROM {declared_not_passed} d
                              WHERE d.project_id = %(project)s AND d.triage_id = t.id)
        ),
        EXISTS (SELECT 1 FROM {triage} t WHERE t.project_id = %(project)s AND t.stale)
    """,
    triage=Triage,
    gap=Gap,
    declared_not_passed=DeclaredNotPassed,
)


def triages_mark_stale(*, project_id: int) -> None:
    """A triage no open gap matches any more (the test passes now) is stale: clean it up; one
    on a backend that has not run yet is not (made before its first run, it awaits it), nor a
    declaration the project's agreement score uses (``DeclaredNotPassed``). One past its expiry
    day is marked expired (the gaps it covered count untracked again). Run after the snapshots
    are written."""
    with connection.cursor() as cursor:
        cursor.execute(_STALE_ALL_SQL, {"project": project_id})


def triages_mark_stale_touched(*, project_id: int) -> None:
    """``triages_mark_stale`` after a recompute's diff, matching only the gaps it opened or gave
    another reason (``parity_gaps_touched``, already given their triage) where that tells the
    same: a triage matching an open gap the diff left alone matched it before, so it was not
    stale; if an open gap picks it, it still is not; if none does, every open gap is matched.
    With no stale triage to wake, the touched gaps need no match either (a first completion
    touches every gap of its backend)."""
    params = {"project": project_id}
    with connection.cursor() as cursor:
        cursor.execute(_TRIAGES_STATE_SQL, params)
        unpicked, any_stale = cursor.fetchone()
        if unpicked:
            statement = _STALE_ALL_SQL
        elif any_stale:
            statement = _STALE_TOUCHED_SQL
        else:
            statement = _STALE_PICKED_SQL
        cursor.execute(statement, params)
