"""The parity engine: turns stored results into gaps, snapshots and roll-ups when runs complete.

Writes only; pages and the API read the tables it fills through ``parity.selectors``.
"""

from parity.engine.freshness import stale_current_runs
from parity.engine.probes import probe_outcomes_write
from parity.engine.recompute import parity_recompute, project_recompute

__all__ = [
    "parity_recompute",
    "probe_outcomes_write",
    "project_recompute",
    "stale_current_runs",
]
