"""Roll-ups that fell behind their data: a ``run_completed`` message was lost, or its recompute
failed for good. Each backend's ``BackendState`` is its fill state (which run it was computed
from, and when); comparing it with what the tables say now finds every backend to recompute.
"""

import logging

from parity.engine.current import current_run_pick
from parity.models import Backend, BackendState, Run, Upload, UploadStatus

logger = logging.getLogger(__name__)


def stale_current_runs() -> list[Run]:
    """For each backend whose roll-ups are stale, the run they should be computed from: its
    current run when the state names another run (or none), or when an upload of that run
    finished after the state was computed (a late shard whose recompute never ran)."""
    stale = []
    states = {s.backend_id: s for s in BackendState.objects.all()}
    for backend in Backend.objects.select_related("project").order_by("pk"):
        current = current_run_pick(project=backend.project, backend=backend)
        if current is not None and _behind(states.get(backend.pk), current):
            stale.append(current)
    return stale


def _behind(state: BackendState | None, current: Run) -> bool:
    if state is None or state.current_run_id != current.pk:
        return True
    # A failed upload too: its run manifest was stored, and counts.
    return Upload.objects.filter(
        run_id=current.pk,
        status__in=[UploadStatus.DONE, UploadStatus.FAILED],
        finished_at__gt=state.computed_at,
    ).exists()
