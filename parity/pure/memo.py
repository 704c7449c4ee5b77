"""A table of values worked out once per key, for values that repeat across a million cases
(``time=`` attributes, their COPY text)."""

from collections.abc import Callable, Hashable
from typing import Any


class Remembered(dict):
    """``table[key]`` is ``make(key)``, worked out on its first use. Past ``keep`` keys the table
    starts over: keys that hardly repeat (microsecond timings) must not pile up. A key seen
    before costs one dict lookup."""

    def __init__(self, make: Callable[[Any], Any], *, keep: int) -> None:
        super().__init__()
        self._make = make
        self._keep = keep

    def __missing__(self, key: Hashable) -> Any:
        if len(self) >= self._keep:
            self.clear()
        value = self[key] = self._make(key)
        return value
