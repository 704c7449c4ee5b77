"""How the engine's statements over whole runs are planned.

Each joins every test of one backend's current outcomes with another's (a run's tests against
the reference's). The planner sizes those sets from the shared tables' statistics, which lag
the transaction's own writes and know nothing of a backend or project that is new since the
last ANALYZE: it then expects one row, picks a nested loop, and the loop runs once per test
over the other set (quadratic: minutes at 100k tests, where a hash join takes a fraction of a
second). ANALYZE in the transaction would fix the estimates but holds a lock that serializes
every project's recompute on the shared table, so these statements are planned without
nested loops instead: at these sizes a hash join is the right plan whatever the estimates say.
"""

from psycopg2 import sql

# JIT is off with them: disabling a join method inflates the plan's cost past jit_above_cost,
# and compiling takes longer than these statements run.
_HASH_JOINS = sql.SQL(
    "SET LOCAL enable_nestloop = off; SET LOCAL jit = off;\n{statement}\n"
    "RESET enable_nestloop; RESET jit;"
)


def hash_joins(statement: sql.Composable) -> sql.Composed:
    """``statement`` (one or several, ``;``-separated) planned without nested loops."""
    return _HASH_JOINS.format(statement=statement)
