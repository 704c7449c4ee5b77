"""Every way parity's SQL steers the Postgres planner, each with its one reason. Statements
compose these by name (``{fence}``, ``hash_joins``); nothing else sets a planner option or
spells a fence (``tests/tools/test_planner_steering.py`` looks).

1. **Join methods.** Statements that join whole runs (a run's tests against the reference's,
   a backend's current outcomes against another's) are planned as hash joins. The planner
   sizes those sets from the shared tables' statistics, which lag the transaction's own writes
   and know nothing of a backend, project or run newer than the last ANALYZE: it then expects
   one row and picks a nested loop that runs once per test over the other set (quadratic in
   the tests), or a merge join on the backend alone that compares every pair of its tests.
   ANALYZE in the transaction would fix the estimates but holds a lock that serializes every
   project's recompute on the shared table. JIT is off with them: disabling a join method
   inflates the plan's cost past ``jit_above_cost``, and compiling takes longer than these
   statements run. One read (a backend's first verdict) merges instead: its joins are all by
   test id over sets whose indexes give that order.
2. **Memory for sorts.** A whole run's results are deduplicated by a sort and its outcomes
   hashed: at the default ``work_mem`` those spill to disk at large suites.
3. **Fences.** ``OFFSET 0`` in a subquery (most often a LATERAL one) keeps the planner from
   flattening it into the outer query, so it stays a loop of index probes over a few outer rows
   (a run's changed tests, the files of a manifest, one regex at a time), whatever the join
   settings above or the statistics say.

Small sets the engine writes itself (a run's changed outcomes) go to an analyzed temporary
table instead, so their writes are planned on real counts.
"""

import contextlib
from collections.abc import Iterator

from psycopg2 import sql

# 1. Join methods, until the end of the transaction the statement runs in.
HASH_JOINS_UNTIL_COMMIT = sql.SQL(
    "SET LOCAL enable_nestloop = off; SET LOCAL enable_mergejoin = off; SET LOCAL jit = off"
)
MERGE_JOINS_UNTIL_COMMIT = sql.SQL(
    "SET LOCAL enable_nestloop = off; SET LOCAL enable_hashjoin = off; SET LOCAL jit = off"
)
_JOINS_DEFAULT = sql.SQL("RESET enable_nestloop; RESET enable_mergejoin; RESET jit")

# 2. Memory for sorts and hashes of whole runs, until the end of the transaction (or RESET).
SORTS_IN_MEMORY_UNTIL_COMMIT = sql.SQL("SET LOCAL work_mem = '32MB'")
SORTS_DEFAULT = sql.SQL("RESET work_mem")

# 3. A fence: the subquery it ends stays a loop (see above). Composed as ``{fence}``.
FENCE = sql.SQL("OFFSET 0")


@contextlib.contextmanager
def hash_joins(cursor) -> Iterator[None]:
    """Statements run on ``cursor`` inside the block are planned with hash joins only, and the
    settings reset after it, sooner than the transaction's end. (Should one fail, the
    transaction or savepoint rolling back undoes the settings too.)"""
    cursor.execute(HASH_JOINS_UNTIL_COMMIT)
    yield
    cursor.execute(_JOINS_DEFAULT)
