"""prometheus_client's multiprocess mode for every process that counts: gunicorn's web processes
(requests) and Celery's pool processes (tasks). With ``PROMETHEUS_MULTIPROC_DIR`` set, each
process writes its counts to files of its own there and ``/metrics`` sums every file.

Files are named by a process identifier. prometheus_client's default, the pid, collides when
containers share the directory (each numbers its processes from 1), so the host name, a
container's id, goes in front. Imported by each module that defines metrics, before it does."""

import os
import socket

from prometheus_client import values


def _process_identifier() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    values.ValueClass = values.MultiProcessValue(_process_identifier)
