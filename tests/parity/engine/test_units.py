"""Pure helpers of the engine and selectors."""

import pytest

from parity.definitions import coverage_dropped
from parity.selectors.fragments import folder_of


@pytest.mark.parametrize(
    ("previous", "current", "dropped"),
    [
        (None, 0, False),  # a backend's first run has nothing to drop from
        (0, 0, False),
        (100, 96, False),
        (100, 95, False),  # exactly 5 % fewer is not "more than 5 %"
        (100, 94, True),
        (100, 120, False),
    ],
)
def test_coverage_drop_is_more_than_the_percentage(previous, current, dropped):
    assert coverage_dropped(previous=previous, current=current, percent=5) is dropped


@pytest.mark.parametrize(
    ("file", "folder"),
    [("test/ops/test_a.py", "test/ops"), ("test_a.py", "."), ("../../test/x.py", "../../test")],
)
def test_folder_of(file, folder):
    assert folder_of(file) == folder
