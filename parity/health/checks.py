"""What ``/readyz`` checks, each a function answering ``Check``: the database answers, every
migration is applied, the broker answers and a worker's heartbeat is recent. With no broker
configured (a laptop: tasks run eagerly in the web process) there is neither broker nor worker
to wait for, and those two checks say "eager" and pass."""

from dataclasses import dataclass

import redis
from django.conf import settings
from django.db import DatabaseError, connection
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.migrations.executor import MigrationExecutor

from parity.telemetry.heartbeat import broker_redis, heartbeats_alive

EAGER = "eager"
_migrated: set[str] = set()  # databases seen fully migrated: a running process stays so


@dataclass(frozen=True)
class Check:
    ok: bool
    detail: str


def database_check(*, database: BaseDatabaseWrapper = connection) -> Check:
    try:
        with database.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError as exc:
        return Check(False, f"unreachable: {_first_line(exc)}")
    return Check(True, "ok")


def migrations_check(*, database: BaseDatabaseWrapper = connection) -> Check:
    """Unapplied migrations (a deploy whose ``migrate`` has not run yet) fail it; once all are
    applied the answer is kept, since reading them all from disk each probe costs."""
    if database.alias in _migrated:
        return Check(True, "ok")
    try:
        executor = MigrationExecutor(database)
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except DatabaseError as exc:
        return Check(False, f"unknown: {_first_line(exc)}")
    if plan:
        names = ", ".join(f"{m.app_label}.{m.name}" for m, _backwards in plan[:5])
        return Check(False, f"{len(plan)} not applied: {names}")
    _migrated.add(database.alias)
    return Check(True, "ok")


def broker_check() -> Check:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return Check(True, EAGER)
    try:
        broker_redis().ping()
    except redis.RedisError as exc:
        return Check(False, f"unreachable: {_first_line(exc)}")
    return Check(True, "ok")


def worker_check() -> Check:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return Check(True, EAGER)
    try:
        alive = heartbeats_alive(client=broker_redis())
    except redis.RedisError:
        return Check(False, "unknown: the broker is unreachable")
    if not alive:
        seconds = settings.PARITY_WORKER_HEARTBEAT_MAX_AGE_SECONDS
        return Check(False, f"no worker heartbeat within {seconds} s")
    return Check(True, f"ok: {', '.join(alive)}")


def readiness() -> dict[str, Check]:
    """Every check, in order; migrations are not read from a database that does not answer."""
    results = {"database": database_check()}
    if results["database"].ok:
        results["migrations"] = migrations_check()
    else:
        results["migrations"] = Check(False, "unknown: the database is unreachable")
    results["broker"] = broker_check()
    results["worker"] = worker_check()
    return results


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
