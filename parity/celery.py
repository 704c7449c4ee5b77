import ctypes
import ctypes.util
import logging
import os
import signal
import sys

from celery import Celery
from celery.signals import worker_init, worker_process_init
from django.db import DatabaseError
from kombu.exceptions import OperationalError
from kombu.transport import TRANSPORT_ALIASES
from redis.exceptions import RedisError

# Signal receivers: the worker's heartbeat (/readyz) and task times (/metrics).
from parity.telemetry import heartbeat, task_metrics  # noqa: F401

logger = logging.getLogger(__name__)

# redis:// and rediss:// brokers use kombu's Redis transport with the fix in parity.broker (a
# Redis restart while a task runs no longer ends the worker). Set before any connection is made.
TRANSPORT_ALIASES["redis"] = TRANSPORT_ALIASES["rediss"] = "parity.broker:Transport"

# Production unless told: a server started bare must not run in DEBUG with a known secret;
# a laptop sets DJANGO_SETTINGS_MODULE=parity.settings.local (the Makefile does).
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parity.settings.production")

app = Celery("parity")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Pool children die with the worker's main process. Killed with SIGKILL (an OOM kill, `kill -9`,
# a supervisor giving up), the main process cannot wind its children down; without this they
# run on as orphans holding their database connections and an upload's row lock until their
# task ends. The kernel sends the child SIGKILL when its parent dies (Linux' PR_SET_PDEATHSIG);
# Postgres then rolls the child's transaction back and recovery queues the upload again.
# Celery 5.7's prefork initializer sets the same, but silently ignores a failure; this one logs
# it, and also covers a parent that died between the fork and the prctl (docs/resilience.md).
PR_SET_PDEATHSIG = 1
_main_pid: int | None = None


@worker_init.connect
def _remember_main_process(**kwargs) -> None:
    global _main_pid
    _main_pid = os.getpid()


@worker_process_init.connect
def _die_with_main_process(**kwargs) -> None:
    # The solo pool sends this signal in the main process itself: nothing to do there.
    if not sys.platform.startswith("linux") or os.getpid() == _main_pid:
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        logger.warning("prctl(PR_SET_PDEATHSIG) failed: errno %s", ctypes.get_errno())
        return
    if _main_pid is not None and os.getppid() != _main_pid:
        os._exit(1)  # the main process died between the fork and the prctl


# Task options for adapters whose work is idempotent: acknowledged after the work (a lost worker
# means redelivery) and retried with backoff on database errors only; bad input is not retried.
RETRY_ON_DATABASE_ERRORS = {
    "acks_late": True,
    "autoretry_for": (DatabaseError,),
    "retry_backoff": 5,
    "retry_backoff_max": 300,
    "retry_jitter": True,
    "max_retries": 5,
}


# What a publish raises once the broker stays out of reach through CELERY_TASK_PUBLISH_RETRY_POLICY
# (kombu wraps most of it in OperationalError; a Redis still loading its data after a restart
# can surface as redis' own error).
BROKER_ERRORS = (OperationalError, RedisError, OSError)


def task_send(task, *args) -> bool:
    """Queue ``task(*args)`` with ``delay``; False when the broker stayed unreachable. That is
    logged, not raised: the work is already stored in Postgres, and a beat task queues it again
    (uploads: ``ingest.recovery``; run completions: ``parity.tasks.rollups_verify``). So a
    request whose rows committed never answers 500 because Redis was restarting."""
    try:
        task.delay(*args)
    except BROKER_ERRORS as exc:
        logger.warning("could not queue %s%r, left to recovery: %r", task.name, args, exc)
        return False
    return True
