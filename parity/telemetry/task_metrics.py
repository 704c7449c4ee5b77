"""How long each Celery task ran (ingest, recomputes, the digest), counted in the process that
ran it: in a worker, a pool process. They reach ``/metrics`` through ``PROMETHEUS_MULTIPROC_DIR``
shared with the web (docs/health.md); with tasks eager, the web process counts them itself."""

import time

from celery.signals import task_postrun, task_prerun
from prometheus_client import Histogram

from parity.telemetry import prometheus  # noqa: F401  (multiprocess files before any metric)

TASK_SECONDS = Histogram(
    "parity_task_seconds",
    "Time a Celery task ran, by task name and end state",
    ["task", "state"],
    buckets=(0.1, 0.5, 1, 2.5, 5, 15, 60, 300, 900, 1800),
)
_started: dict[str, float] = {}  # task id -> when it began, in the process running it


@task_prerun.connect
def _task_started(task_id: str, **kwargs) -> None:
    _started[task_id] = time.perf_counter()


@task_postrun.connect
def _task_ended(task_id: str, task, state: str | None = None, **kwargs) -> None:
    started = _started.pop(task_id, None)
    if started is not None:
        TASK_SECONDS.labels(task.name, state or "UNKNOWN").observe(time.perf_counter() - started)
