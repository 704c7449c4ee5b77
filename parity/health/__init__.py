"""Probes an operator's platform reads, an edge like the pages: ``/healthz`` (the process
answers), ``/readyz`` (what the process needs answers: database, migrations, broker, a worker)
and ``/metrics`` (request and task counts, parity's own numbers read through
``parity.selectors.operations``). What the processes report about themselves (the worker
heartbeat ``/readyz`` reads, task times) is ``parity.telemetry``, below every layer.
docs/health.md."""
