"""Leases: one holder at a time across workers for a job that must not run twice at once (the
issue sync), without a lock tied to a database connection.

A session advisory lock (``pg_try_advisory_lock``) belongs to the server connection that took
it; behind a transaction pooler (PgBouncer's ``pool_mode = transaction``) the next statement may
run on another server connection, so the unlock misses and the lock leaks to whichever client
gets that connection next. A transaction-scoped lock would hold a transaction open for the whole
job, across the tracker requests the issue sync makes. A lease is a row: taken and given back by
one statement each, in autocommit, so it works through any pooler; and a holder that dies lets
it lapse at ``held_until``.
"""

import datetime
import os
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

from parity.models import Lease
from parity.models.sql import model_sql

# One statement: the row is created, or taken over once its holder's time is up; a row still
# held is left as it is and the statement returns nothing.
_TAKE = model_sql(
    """
    INSERT INTO {lease} (name, held_until, holder)
    VALUES (%(name)s, now() + %(seconds)s * interval '1 second', %(holder)s)
    ON CONFLICT (name) DO UPDATE SET held_until = EXCLUDED.held_until, holder = EXCLUDED.holder
    WHERE {lease}.held_until <= now()
    RETURNING name
    """,
    lease=Lease,
)
_GIVE_BACK = model_sql(
    "UPDATE {lease} SET held_until = now() WHERE name = %(name)s AND holder = %(holder)s",
    lease=Lease,
)


@contextmanager
def lease_held(*, name: str, seconds: int) -> Iterator[bool]:
    """Take the lease ``name`` for ``seconds`` and give it back on exit; yields False (and
    takes nothing) while another holder has it."""
    holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    params = {"name": name, "seconds": seconds, "holder": holder[:200]}
    with connection.cursor() as cursor:
        cursor.execute(_TAKE, params)
        held = cursor.fetchone() is not None
    try:
        yield held
    finally:
        if held:
            with connection.cursor() as cursor:
                cursor.execute(_GIVE_BACK, params)


def lease_holder(*, name: str, at: datetime.datetime | None = None) -> str | None:
    """Who holds ``name`` now (or at ``at``), if anyone: for the log and for tests."""
    lease = Lease.objects.filter(name=name).first()
    if lease is None or lease.held_until <= (at or datetime.datetime.now(datetime.UTC)):
        return None
    return lease.holder
