"""The aligned view (``?aligned=1``): each backend compared with the reference at the newest
commit both ran, not at whatever each ran last. Per backend, the newest commit (by when CI ran
it) for which it and the reference each have a complete, non-probe default-branch run whose
results are kept; the latest such run of each is compared, with the engine's rules
(``parity.definitions``: a test's outcome in a run, gap states, the run manifest's absent
states, the triage that applies).

A view, computed on request from those runs' results rather than kept in roll-ups: its cost is
the size of the runs compared (each read once by the (run, test) index), whatever the history.
A few statements, in one transaction: the pairs of runs; the compared rows into a temporary
table; their triage; and the numbers (or the gaps, or the file cells) read from it. The
reference's own column of a heatmap stays its current run's: each backend's cells carry the
counts of the reference run they were compared with.
"""

from psycopg2 import sql

from parity.definitions import (
    OUTCOME_PARAMS,
    REFERENCE_MISSING,
    absent_tests,
    gap,
    may_be_current_sql,
    reason_has_issue,
    runs_outcomes,
    triage_picks,
)
from parity.models import Backend, Project, Reason, Run, TestCase
from parity.models.parity import KINDS_WITH_ISSUE
from parity.models.sql import model_sql
from parity.plans import HASH_JOINS_UNTIL_COMMIT, SORTS_IN_MEMORY_UNTIL_COMMIT
from parity.read_replica import read_cursor
from parity.selectors.aligned import Aligned, AlignedGap, AlignedNumbers, AlignedPair

# Per compared backend, its latest complete run and the reference's at the newest commit they
# both ran (newest by the later of the two runs' starts).
_PAIRS_SQL = model_sql(
    """
    WITH runs AS (
        SELECT DISTINCT ON (r.backend_id, r.commit) r.id, r.backend_id, r.commit, r.started_at
        FROM {run} r JOIN {project} p ON p.id = r.project_id
        WHERE r.project_id = %(project)s AND r.complete AND {may_be_current}
          AND r.results_expired_at IS NULL
        ORDER BY r.backend_id, r.commit, r.started_at DESC, r.id DESC
    )
    SELECT DISTINCT ON (b.backend_id) b.backend_id, b.commit, b.id, b.started_at, r.id
    FROM runs b JOIN runs r ON r.commit = b.commit AND r.backend_id = %(reference)s
    WHERE b.backend_id <> %(reference)s
    ORDER BY b.backend_id, greatest(b.started_at, r.started_at) DESC, b.id DESC
    """,
    run=Run,
    project=Project,
    may_be_current=may_be_current_sql("r", sql.SQL("p.default_branch")),
)


def aligned_pairs(*, project: Project) -> dict[int, AlignedPair]:
    """Backend id -> the runs it is compared at; a backend with no commit in common with the
    reference is left out. One query."""
    with read_cursor() as cursor:
        cursor.execute(
            _PAIRS_SQL, {"project": project.pk, "reference": project.reference_backend_id}
        )
        return {
            row[0]: AlignedPair(
                backend_id=row[0],
                commit=row[1],
                run=row[2],
                started_at=row[3],
                reference_run=row[4],
            )
            for row in cursor.fetchall()
        }


# The compared rows: every test the reference passes with the backend's outcome in its paired
# run (NULL: absent, with the manifest's reason in ``absent``), and every test of the backend's
# run the reference's lacks. ``gap`` is the gap state, NULL where the test passes on both.
_ROWS_SQL = model_sql(
    """
    DROP TABLE IF EXISTS parity_aligned;
    CREATE TEMP TABLE parity_aligned ON COMMIT DROP AS
    WITH pairs AS (
        SELECT * FROM unnest(%(backends)s::bigint[], %(runs)s::bigint[], %(refs)s::bigint[])
            AS p(backend_id, run_id, reference_run_id)
    ), o AS ({outcomes}), a AS ({absent})
    SELECT row_number() OVER () AS row_id, x.backend_id, x.test_id, x.outcome, x.reference,
           x.gap, x.reason_id, tc.key AS test_key, tc.file
    FROM (
        SELECT p.backend_id, r.test_id, b.outcome, r.outcome AS reference,
               CASE WHEN r.outcome = %(passed)s THEN {state} END AS gap,
               b.reason_id
        FROM pairs p
        JOIN o r ON r.run_id = p.reference_run_id
        LEFT JOIN o b ON b.run_id = p.run_id AND b.test_id = r.test_id
        LEFT JOIN a ON a.run_id = p.run_id AND a.test_id = r.test_id
        UNION ALL
        SELECT p.backend_id, b.test_id, b.outcome, NULL, {reference_missing}, b.reason_id
        FROM pairs p
        JOIN o b ON b.run_id = p.run_id
        WHERE NOT EXISTS (
            SELECT 1 FROM o r WHERE r.run_id = p.reference_run_id AND r.test_id = b.test_id
        )
    ) x
    JOIN {testcase} tc ON tc.id = x.test_id;
    ANALYZE parity_aligned;
    """,
    testcase=TestCase,
    outcomes=runs_outcomes(sql.Placeholder("all_runs")),
    state=gap(sql.SQL("b.outcome"), absent=sql.SQL("a.state")),
    reference_missing=REFERENCE_MISSING,
    absent=absent_tests(sql.SQL("SELECT unnest(%(runs)s::bigint[])")),
)

# Each gap's triage as the engine picks it, and whether it is tracked or intended.
_TRIAGE_SQL = sql.SQL(
    """
    DROP TABLE IF EXISTS parity_aligned_triage;
    CREATE TEMP TABLE parity_aligned_triage ON COMMIT DROP AS
    WITH gaps AS MATERIALIZED (
        SELECT *, file AS test_file FROM parity_aligned WHERE gap IS NOT NULL
    ),
    picked AS ({picks})
    SELECT g.row_id, t.kind,
           coalesce(t.kind = 'intended', false) AS intended,
           coalesce(t.kind, '') <> 'intended'
               AND (coalesce(t.kind IN ({with_issue}), false) OR {reason_issue}) AS tracked
    FROM gaps g LEFT JOIN picked t ON t.row_id = g.row_id;
    """
).format(
    picks=triage_picks("gaps", "row_id"),
    with_issue=sql.SQL(", ").join(sql.Literal(k.value) for k in KINDS_WITH_ISSUE),
    reason_issue=reason_has_issue(sql.SQL("g.reason_id")),
)

_NUMBERS_SQL = sql.SQL(
    """
    SELECT a.backend_id,
        count(*) FILTER (WHERE a.reference = %(passed)s),
        count(*) FILTER (WHERE a.gap = 'skipped'),
        count(*) FILTER (WHERE a.gap = 'failed'),
        count(*) FILTER (WHERE a.gap = 'error'),
        count(*) FILTER (WHERE a.gap IS NOT NULL AND a.gap NOT IN
                         ('skipped', 'failed', 'error', 'reference_missing')),
        count(*) FILTER (WHERE a.gap <> 'reference_missing' AND t.tracked),
        count(*) FILTER (WHERE a.gap <> 'reference_missing' AND NOT t.tracked
                         AND NOT coalesce(t.intended, false)),
        count(*) FILTER (WHERE a.gap <> 'reference_missing' AND t.intended),
        count(*) FILTER (WHERE a.gap = 'reference_missing'),
        count(*) FILTER (WHERE a.outcome IS NOT NULL)
    FROM parity_aligned a LEFT JOIN parity_aligned_triage t ON t.row_id = a.row_id
    GROUP BY a.backend_id
    """
)

_CELLS_SQL = sql.SQL(
    """
    SELECT a.backend_id, a.file,
        count(*) FILTER (WHERE a.outcome = %(passed)s),
        count(*) FILTER (WHERE a.outcome = %(failed)s),
        count(*) FILTER (WHERE a.outcome = %(error)s),
        count(*) FILTER (WHERE a.outcome = %(skipped)s),
        count(*) FILTER (WHERE a.outcome IS NULL AND a.reference = %(passed)s),
        count(*) FILTER (WHERE a.gap IS NOT NULL AND a.gap <> 'reference_missing'),
        count(*) FILTER (WHERE a.reference = %(passed)s),
        count(*) FILTER (WHERE a.reference IS NOT NULL),
        count(*) FILTER (WHERE a.reference = %(skipped)s)
    FROM parity_aligned a
    GROUP BY a.backend_id, a.file
    """
)

_GAPS_SQL = model_sql(
    """
    SELECT a.backend_id, a.test_key, a.test_id, a.file, a.gap, rs.text, t.kind,
           coalesce(t.tracked, false), coalesce(t.intended, false)
    FROM parity_aligned a
    JOIN parity_aligned_triage t ON t.row_id = a.row_id
    LEFT JOIN {reason} rs ON rs.id = a.reason_id
    WHERE a.gap IS NOT NULL AND {state_filter}
    ORDER BY a.backend_id, a.test_key
    """,
    reason=Reason,
    state_filter=sql.SQL(
        "CASE WHEN %(state)s::text IS NULL THEN a.gap <> 'reference_missing' "
        "ELSE a.gap = %(state)s END"
    ),
)


def aligned_view(
    *,
    project: Project,
    numbers: bool = True,
    cells: bool = False,
    gaps: bool = False,
    backend: str | None = None,
    state: str | None = None,
) -> Aligned:
    """The aligned comparison of every backend (``backend``: that one only): its numbers, and
    with ``cells`` its per-file counts, with ``gaps`` its gaps (of ``state``; by default every
    state but ``reference_missing``). Seven statements (the backends' names, the pairs, and
    five in one transaction), and one more per part asked for."""
    names = dict(Backend.objects.filter(project=project).values_list("pk", "name"))
    pairs = aligned_pairs(project=project)
    if backend is not None:
        pairs = {pk: p for pk, p in pairs.items() if names[pk] == backend}
    found = Aligned(names=names, pairs=pairs, numbers={}, cells={}, gaps=[])
    if not pairs:
        return found
    ordered = list(pairs.values())
    params = {
        **OUTCOME_PARAMS,
        "project": project.pk,
        "backends": [p.backend_id for p in ordered],
        "runs": [p.run for p in ordered],
        "refs": [p.reference_run for p in ordered],
        "all_runs": sorted({p.run for p in ordered} | {p.reference_run for p in ordered}),
        "state": state,
    }
    # Its temporary tables need the primary: a hot standby refuses to create even those.
    with read_cursor(atomic=True, temp_tables=True) as cursor:
        cursor.execute(HASH_JOINS_UNTIL_COMMIT)
        # The runs' outcomes are sorted and hashed whole: in memory (``parity.plans``).
        cursor.execute(SORTS_IN_MEMORY_UNTIL_COMMIT)
        cursor.execute(_ROWS_SQL, params)
        cursor.execute(_TRIAGE_SQL, params)
        if numbers:
            cursor.execute(_NUMBERS_SQL, params)
            found.numbers.update((row[0], _numbers(row[1:])) for row in cursor.fetchall())
        if cells:
            cursor.execute(_CELLS_SQL, params)
            found.cells.update(((row[0], row[1]), tuple(row[2:])) for row in cursor.fetchall())
        if gaps:
            cursor.execute(_GAPS_SQL, params)
            gap_rows = cursor.fetchall()
    if gaps:
        found.gaps.extend(_gap(row, names, pairs) for row in gap_rows)
    return found


def _numbers(row: tuple) -> AlignedNumbers:
    reference_passing, skipped, failed, error, missing, *rest = row
    tracked, untracked, intended, reference_missing, test_count = rest
    return AlignedNumbers(
        reference_passing=reference_passing,
        gaps={"skipped": skipped, "failed": failed, "error": error, "missing": missing},
        tracked=tracked,
        untracked=untracked,
        intended=intended,
        reference_missing=reference_missing,
        test_count=test_count,
    )


def _gap(row: tuple, names: dict[int, str], pairs: dict[int, AlignedPair]) -> AlignedGap:
    backend_id, key, test_id, file, state, reason, kind, tracked, intended = row
    pair = pairs[backend_id]
    return AlignedGap(
        backend=names[backend_id],
        test=key,
        test_id=test_id,
        file=file,
        state=state,
        reason=reason,
        triage=kind,
        tracked=tracked,
        intended=intended,
        commit=pair.commit,
        run=pair.run,
    )
