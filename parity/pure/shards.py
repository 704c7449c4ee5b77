"""A CI job's shard as the client names it: ``"2/4"``, the second of four (numbered from 1).

A shard named so tells the server how many shards the run has: the run completes once every
one of them has sent its last upload (``parity.services.lifecycle``), and a shard's verdict
judges its own files until then (``parity.result_reads.shard_verdict``). Any other label
(``"linux-2"``) is a name only: it counts nothing.
"""

import re

_SHARD = re.compile(r"\A([1-9][0-9]{0,4})/([1-9][0-9]{0,4})\Z")


def shard_parse(label: str) -> tuple[int, int] | None:
    """``"2/4"`` -> ``(2, 4)``; None for a label that is not ``I/N`` with 1 <= I <= N."""
    found = _SHARD.match(label.strip())
    if found is None:
        return None
    index, count = int(found.group(1)), int(found.group(2))
    return (index, count) if index <= count else None
