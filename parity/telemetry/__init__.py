"""What each process reports about itself, for every layer to use: a Celery worker's heartbeat
(``heartbeat``, the Redis key ``/readyz`` asks for), how long each task ran (``task_metrics``)
and prometheus_client's multiprocess files (``prometheus``). The Celery app loads the first two;
``parity.health`` (``/healthz``, ``/readyz``, ``/metrics``, an edge) reads what they leave.
docs/health.md."""
