"""kombu's Redis transport with one fix: a channel keeps the connection parameters it was
opened with, so it can still reach Redis after its transport was detached.

Why (kombu 5.7, celery 5.7): when the worker loses the broker, the consumer calls
``connection.collect()`` and then ``connection.close()``. ``collect()`` tries to close the
default channel, but that channel's ``close()`` first reads the pending BRPOP and raises the
connection error, which ``collect()`` ignores: the channel stays open. ``collect()`` then
detaches the transport (``transport.client = None``). The ``close()`` after it closes the channel
for real: the channel drops its connection pool, then restores its unacknowledged messages (a
task running under ``acks_late``), which builds a new pool from ``_connparams()``, which reads
``self.connection.client.hostname``: ``AttributeError`` on ``None``. kombu only ignores
connection and channel errors there, so the AttributeError ends the consumer: "Unrecoverable
error", and the worker exits. It happens whenever Redis goes away while a task runs. The acks
of those tasks, sent when they finish on the old channel, take the same path.

With the parameters kept, the restore and the late acks reach Redis once it is back (or fail
with a connection error, which kombu handles: the message stays in the unacknowledged hash and
Redis redelivers it after the visibility timeout; the ingest task is idempotent either way).
``parity.celery`` makes this the transport of ``redis://`` and ``rediss://`` URLs.
"""

from kombu.transport import redis


class Channel(redis.Channel):
    _kept_connparams: dict[bool, dict] | None = None

    def _connparams(self, asynchronous: bool = False) -> dict:
        connection = self.connection  # the transport; None once the channel is closed
        if connection is None or connection.client is None:
            kept = (self._kept_connparams or {}).get(asynchronous)
            if kept is not None:
                return dict(kept)
        params = super()._connparams(asynchronous=asynchronous)
        self._kept_connparams = {**(self._kept_connparams or {}), asynchronous: dict(params)}
        return params


class Transport(redis.Transport):
    Channel = Channel
