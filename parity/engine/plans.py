"""How the engine's statements over whole runs are planned.

Each joins every test of one backend's current outcomes with another's (a run's tests against
the reference's). The planner sizes those sets from the shared tables' statistics, which lag
the transaction's own writes and know nothing of a backend or project that is new since the
last ANALYZE: it then expects one row, picks a nested loop, and the loop runs once per test
over the other set (quadratic: minutes at 100k tests, where a hash join takes a fraction of a
second). Nor is a merge join safe: on a guess of one row per backend, it merges on the
backend alone and compares every pair of tests of it. ANALYZE in the transaction would fix the
estimates but holds a lock that serializes every project's recompute on the shared table, so
these statements are planned as hash joins instead: at these sizes the right plan whatever the
estimates say. (Small sets the engine writes itself, such as a run's changed outcomes, go to
an analyzed temporary table instead, so their writes can probe an index row by row.)
"""

import contextlib
from collections.abc import Iterator

# The same settings as the selectors that join whole runs (the verdict, the run page).
from parity.definitions import HASH_JOINS_UNTIL_COMMIT

_DEFAULTS = "RESET enable_nestloop; RESET enable_mergejoin; RESET jit"


@contextlib.contextmanager
def hash_joins(cursor) -> Iterator[None]:
    """Statements run on ``cursor`` inside the block are planned with hash joins only. (Should
    one fail, the transaction or savepoint rolling back undoes the settings too.)"""
    cursor.execute(HASH_JOINS_UNTIL_COMMIT)
    yield
    cursor.execute(_DEFAULTS)
