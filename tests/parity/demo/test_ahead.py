"""The demo's uploads made in another process arrive as the generator makes them, and an error
there reaches the loader."""

from __future__ import annotations

import multiprocessing
from typing import Any

import pytest

from parity.demo import ahead
from parity.demo.scenario import DemoUpload
from tests.parity.demo.readback import DAYS, END


def test_uploads_made_ahead_are_the_uploads_in_order(
    fixture: dict[str, Any], uploads: list[DemoUpload]
) -> None:
    assert list(ahead.demo_uploads_ahead(fixture, days=DAYS, end=END)) == uploads


@pytest.mark.skipif(
    multiprocessing.get_start_method() != "fork",
    reason="the broken maker is patched in here, which only a forked process inherits",
)
def test_an_error_making_the_uploads_is_raised_to_the_loader(
    fixture: dict[str, Any], uploads: list[DemoUpload], monkeypatch: pytest.MonkeyPatch
) -> None:
    def two_then_broken(*_args: object, **_kwargs: object):
        yield from uploads[:2]
        raise ValueError("upstream tests go in merged XML")

    monkeypatch.setattr(ahead, "demo_uploads", two_then_broken)

    made = []
    with pytest.raises(ValueError, match="merged XML"):
        for upload in ahead.demo_uploads_ahead(fixture, days=DAYS, end=END):
            made.append(upload)
    assert made == uploads[:2]
