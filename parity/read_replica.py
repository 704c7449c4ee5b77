"""Where reads go: the primary, or during a page read the read replica, when one is configured
(``PARITY_DB_REPLICA_URL``; docs/operations.md, "A read replica").

Django asks ``ReplicaRouter`` where each ORM query goes; raw SQL asks ``read_cursor``, since
``connection.cursor()`` is always the primary's and no router sees it. Both follow one context
variable. Only the web's replica middleware (``parity.web.replica``) points it at the replica,
around a page read it judged the replica fit for; the engine, ingest, the services, Celery tasks,
commands and tests never do, so they read the primary.

Who is asking is read from the primary whatever the request (users, sessions, upload tokens,
memberships): a token or a login just made works at once, a revoked one is refused at once.

**Invariant:** every write goes to the primary; the replica only ever answers a GET or HEAD of
a page or the read API, and a page it fails is answered again from the primary.
"""

import contextlib
import contextvars
import logging
import re
import time
from collections.abc import Iterator

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections, transaction
from django.db.backends.utils import CursorWrapper

logger = logging.getLogger(__name__)

REPLICA = "replica"
# App labels and models read from the primary in every request: who is asking, and may they.
_IDENTITY_APPS = frozenset({"auth", "sessions", "contenttypes", "admin"})
_IDENTITY_MODELS = frozenset({"parity.uploadtoken", "parity.membership"})
# A WAL position as Postgres prints it (pg_lsn): two hex numbers of up to 32 bits.
LSN = re.compile(r"[0-9A-F]{1,8}/[0-9A-F]{1,8}")

_reads_from: contextvars.ContextVar[str] = contextvars.ContextVar(
    "parity_reads_from", default=DEFAULT_DB_ALIAS
)
# The replica failed this process (refused a connection, shut down): until this moment
# (time.monotonic()) page reads go straight to the primary, with no connection attempt each.
_down_until = 0.0


def reads_alias() -> str:
    """The database alias reads go to now."""
    return _reads_from.get()


@contextlib.contextmanager
def reads_from(alias: str) -> Iterator[None]:
    """Reads inside the block go to ``alias`` (unless ``reads_switch`` moves them)."""
    token = _reads_from.set(alias)
    try:
        yield
    finally:
        _reads_from.reset(token)


def reads_switch(alias: str) -> None:
    """Reads go to ``alias`` until the enclosing ``reads_from`` block ends."""
    _reads_from.set(alias)


@contextlib.contextmanager
def read_cursor(*, atomic: bool = False, temp_tables: bool = False) -> Iterator[CursorWrapper]:
    """A cursor for the raw SQL of a read, on the database reads go to now. ``atomic``: inside
    one transaction on that connection (settings made for the transaction hold until its end).
    ``temp_tables``: the statements create temporary tables, which a hot standby refuses: on the
    primary."""
    alias = DEFAULT_DB_ALIAS if temp_tables else reads_alias()
    with contextlib.ExitStack() as stack:
        if atomic:
            stack.enter_context(transaction.atomic(using=alias, savepoint=False))
        yield stack.enter_context(connections[alias].cursor())


class ReplicaRouter:
    """Django's database router (``DATABASE_ROUTERS``): inert until ``reads_from`` names the
    replica."""

    def db_for_read(self, model, **hints) -> str:
        alias = reads_alias()
        meta = model._meta
        if meta.app_label in _IDENTITY_APPS or meta.label_lower in _IDENTITY_MODELS:
            return DEFAULT_DB_ALIAS
        return alias

    def db_for_write(self, model, **hints) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1, obj2, **hints) -> bool:
        return True  # one database: the replica is a copy of the primary

    def allow_migrate(self, db: str, app_label: str, **hints) -> bool:
        return db == DEFAULT_DB_ALIAS  # migrations reach the replica by replication


# One round trip: is it a standby still streaming from the primary, how far behind is its
# replay, and has it replayed the reader's last write? Received-but-not-replayed WAL is the lag
# it can see; WAL the primary has not sent yet it cannot (docs/operations.md).
_STATE_SQL = """
    SELECT pg_is_in_recovery(),
           EXISTS (SELECT FROM pg_stat_wal_receiver),
           CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
                ELSE extract(epoch FROM now() - pg_last_xact_replay_timestamp()) END,
           COALESCE(pg_last_wal_replay_lsn() >= %(wrote)s::pg_lsn, true)
"""


def replica_refusal(*, wrote: str | None) -> str | None:
    """None when the replica may answer a read that must see ``wrote`` (the primary's WAL
    position after the reader's last write, or None), else why the primary answers instead."""
    if time.monotonic() < _down_until:
        return "the replica failed lately"
    try:
        with connections[REPLICA].cursor() as cursor:
            cursor.execute(_STATE_SQL, {"wrote": wrote})
            standby, streaming, lag, caught_up = cursor.fetchone()
    except DatabaseError as exc:
        replica_failed(exc)
        return "the replica is unreachable"
    if not standby:
        return "the replica is not a standby (promoted?)"
    if not streaming:
        return "the replica is not streaming from the primary"
    if lag is None or lag > settings.PARITY_DB_REPLICA_MAX_LAG_SECONDS:
        return f"the replica's replay is {lag} s behind"
    if not caught_up:
        return "the replica has not replayed the reader's last write"
    return None


def replica_failed(exc: BaseException) -> None:
    """The replica raised ``exc``. One that refused or dropped the connection (no SQLSTATE) or
    is shutting down (57xxx) is left alone for ``PARITY_DB_REPLICA_RETRY_SECONDS``; a query it
    cancelled (a replay conflict, 40001) says nothing of the next one."""
    global _down_until
    code = getattr(exc.__cause__, "pgcode", None)
    if code is not None and not code.startswith("57"):
        return
    _down_until = time.monotonic() + settings.PARITY_DB_REPLICA_RETRY_SECONDS
    logger.warning(
        "read replica failed (%s): pages read the primary for %d s",
        str(exc).strip(),
        settings.PARITY_DB_REPLICA_RETRY_SECONDS,
    )
    with contextlib.suppress(DatabaseError):
        connections[REPLICA].close()


def primary_position() -> str:
    """The primary's current WAL position: a read that must see what was committed before
    now waits for a replica past it. Where WAL is inserted, not written: a commit that need not
    wait for its flush (``synchronous_commit = off``) may not be written yet, and is before it."""
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_insert_lsn()::text")
        return cursor.fetchone()[0]
