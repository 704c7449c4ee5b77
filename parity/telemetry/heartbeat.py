"""A Celery worker's heartbeat: while the worker's main process runs, a thread sets a Redis key
of its own (``parity:worker-alive:<node name>``) every ``PARITY_WORKER_HEARTBEAT_SECONDS``,
expiring after ``PARITY_WORKER_HEARTBEAT_MAX_AGE_SECONDS``. ``/readyz`` asks whether any such
key exists.

Why a key with an expiry in the broker: Redis forgets a stopped worker by itself, so no clock of
the web and the worker is compared; the web already reaches the broker for its own check. Why
not a beat task: the laptop, the end-to-end stack and a deployment without beat would have no
heartbeat, and a task waits behind a long queue, so a busy worker would look dead. Why not
Celery's own event heartbeats: ``--without-heartbeat`` turns them off, and reading them needs
an event receiver. The thread shows the worker's main process runs and reaches Redis, not that
a pool process is free.
"""

import logging
import threading

import redis
from celery.signals import worker_ready, worker_shutdown
from django.conf import settings

logger = logging.getLogger(__name__)

KEY_PREFIX = "parity:worker-alive:"
_stop = threading.Event()


def broker_redis() -> redis.Redis:
    """A client of the broker, failing within a second when it is out of reach."""
    return redis.Redis.from_url(
        settings.CELERY_BROKER_URL, socket_connect_timeout=1, socket_timeout=1
    )


def heartbeat_write(*, client: redis.Redis, nodename: str) -> None:
    client.set(f"{KEY_PREFIX}{nodename}", "1", ex=settings.PARITY_WORKER_HEARTBEAT_MAX_AGE_SECONDS)


def heartbeats_alive(*, client: redis.Redis) -> list[str]:
    """Node names of the workers whose heartbeat has not expired."""
    return sorted(
        key.decode().removeprefix(KEY_PREFIX)
        for key in client.scan_iter(match=f"{KEY_PREFIX}*", count=100)
    )


def _beat(nodename: str) -> None:
    client = broker_redis()
    while not _stop.is_set():
        try:
            heartbeat_write(client=client, nodename=nodename)
        except redis.RedisError as exc:
            # The broker restarting: the worker reconnects by itself, and so does this.
            logger.debug("worker heartbeat not written: %r", exc)
        _stop.wait(settings.PARITY_WORKER_HEARTBEAT_SECONDS)


@worker_ready.connect
def _start(sender, **kwargs) -> None:
    if not settings.CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
        return
    _stop.clear()
    nodename = sender.hostname
    threading.Thread(target=_beat, args=(nodename,), name="parity-heartbeat", daemon=True).start()


@worker_shutdown.connect
def _end(sender, **kwargs) -> None:
    """A worker shutting down says so at once rather than when its key expires."""
    _stop.set()
    if not settings.CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
        return
    try:
        broker_redis().delete(f"{KEY_PREFIX}{sender.hostname}")
    except redis.RedisError as exc:
        logger.debug("worker heartbeat not removed: %r", exc)
