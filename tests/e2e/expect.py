"""What the end-to-end tests wait for and count: an upload's end state over the API, and the
results stored for it read back from Postgres."""

import time
from collections.abc import Callable

from django.db import connection
from django.db.models import Count

from parity.models import Outcome, Result, TestCase
from tests.e2e.client import ApiClient
from tests.e2e.stack import LiveStack

SETTLED = ("done", "failed")


def upload_settled(
    http_api: ApiClient,
    upload_id: int,
    *,
    seconds: float,
    live: LiveStack,
    poke: Callable[[], None] | None = None,
    poke_every: float = 2.0,
) -> dict:
    """Poll the upload over HTTP until it is done or failed and return its body; fail after
    ``seconds``, or at once if the worker died. ``poke`` (e.g. sending the recovery task)
    runs every ``poke_every`` seconds meanwhile."""
    deadline = time.monotonic() + seconds
    next_poke = time.monotonic()
    while True:
        reply = http_api.upload(upload_id)
        assert reply.status == 200, str(reply)
        if reply.body["status"] in SETTLED:
            return reply.body
        live.assert_worker_alive()
        assert time.monotonic() < deadline, (
            f"upload {upload_id} still {reply.body['status']} after {seconds:.0f} s: {reply.body}"
        )
        if poke is not None and time.monotonic() >= next_poke:
            poke()
            next_poke = time.monotonic() + poke_every
        time.sleep(0.25)


def upload_status_reached(
    http_api: ApiClient, upload_id: int, status: str, *, seconds: float
) -> dict:
    deadline = time.monotonic() + seconds
    while True:
        body = http_api.upload(upload_id).body
        if body["status"] == status:
            return body
        assert body["status"] in ("queued", status), f"upload {upload_id} went {body}"
        assert time.monotonic() < deadline, f"upload {upload_id} not {status} in {seconds} s"
        time.sleep(0.05)


def stored_counts(*, upload_id: int) -> dict[str, int]:
    """The upload's Result rows counted by outcome, keyed like ``Upload.counts``."""
    rows = dict(
        Result.objects.filter(upload_id=upload_id)
        .values_list("outcome")
        .annotate(n=Count("id"))
        .values_list("outcome", "n")
    )
    counts = {label: rows.get(value, 0) for value, label in Outcome.choices}
    return {"total": sum(counts.values()), **counts}


def duplicated_tests(*, run_id: int) -> int:
    """Tests of the run holding more than one result (shards are disjoint, so none should)."""
    return (
        Result.objects.filter(run_id=run_id)
        .values("test_id")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )


def id_sequence_position() -> int:
    """The last id drawn from the tests table's sequence (reading it draws none): what a
    writer reserved, used or not, is how far it moves."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [TestCase._meta.db_table])
        sequence = cursor.fetchone()[0]
        # A name Postgres gave, not input; a sequence cannot be a bind parameter.
        cursor.execute(f"SELECT last_value, is_called FROM {sequence}")
        last_value, is_called = cursor.fetchone()
    return last_value if is_called else last_value - 1
