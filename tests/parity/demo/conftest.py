"""The demo's 28 days, generated once per session and read back from the bytes (``readback``)."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest

from parity.demo.scenario import DemoUpload, demo_uploads
from tests.parity.demo.readback import DAYS, END, FIXTURE_PATH, Key, Seen, cases


@pytest.fixture(scope="session")
def fixture() -> dict[str, Any]:
    return json.loads(FIXTURE_PATH.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def uploads(fixture: dict[str, Any]) -> list[DemoUpload]:
    return list(demo_uploads(fixture, days=DAYS, end=END))


@pytest.fixture(scope="session")
def seen(uploads: list[DemoUpload]) -> dict[tuple[int, str], dict[Key, Seen]]:
    """(day index, backend) -> every case of that run, as read back from the uploaded bytes."""
    first = END - datetime.timedelta(days=DAYS - 1)
    runs: dict[tuple[int, str], dict[Key, Seen]] = {}
    for upload in uploads:
        run = runs.setdefault(((upload.day - first).days, upload.backend), {})
        for key, result in cases(upload):
            assert key not in run, f"{key} reported twice in one run"
            run[key] = result
    return runs
