"""Probes an operator's platform reads: ``/healthz`` (the process answers), ``/readyz`` (what
the process needs answers: database, migrations, broker, a worker) and the worker heartbeat
``/readyz`` reads. docs/health.md."""
