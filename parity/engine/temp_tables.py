"""The temporary tables the engine's statements hand rows through, by name.

Each lives until its transaction ends (``ON COMMIT DROP``) and is written again by each recompute
that needs it. The recompute's steps (``parity.engine.recompute.STEPS``) declare which they read
and write with these names; the tests hold those declarations to the SQL each step runs.
"""

# Handed from one step to another.
OUTCOME_CHANGES = "parity_outcome_changes"  # the moved backend's changed outcomes (current.py)
DIFF_SCOPE = "parity_diff_scope"  # the tests a nightly or a late shard can change (gaps.py)
DESIRED = "parity_desired"  # the gaps each backend should have (gaps.py, less pending.py's)
GAPS_TOUCHED = "parity_gaps_touched"  # gaps the diff opened or gave another reason
GAP_MOVES = "parity_gap_moves"  # a scoped diff's absent gaps, -1 before and +1 after

# Made and read by one step alone.
ABSENT = "parity_absent"  # tests absent from a run whose file the manifest names (gaps.py)
REFERENCE_THEN = "parity_reference_then"  # the reference's run when a backend's started
CELL_DELTAS = "parity_cell_deltas"  # how each file cell moves (rollups.py)
PROBE_ROWS = "parity_probe_rows"  # a probe run's outcomes (probes.py, not a recompute)

HANDED = (OUTCOME_CHANGES, DIFF_SCOPE, DESIRED, GAPS_TOUCHED, GAP_MOVES)
ALL = (*HANDED, ABSENT, REFERENCE_THEN, CELL_DELTAS, PROBE_ROWS)
