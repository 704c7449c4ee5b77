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
    assert coverage_dropped(previous=previous, current=current, infra_lacking=0, percent=5) is (
        dropped
    )


@pytest.mark.parametrize(
    ("infra_lacking", "current", "dropped"),
    [
        (40, 60, False),  # every test it lacks, infrastructure lost: a rerun
        (40, 56, True),  # 60 of the 100 were in files that ran, and 4 of those went
        (0, 60, True),
    ],
)
def test_a_coverage_drop_leaves_out_the_tests_infrastructure_lost(infra_lacking, current, dropped):
    drop = coverage_dropped(previous=100, current=current, infra_lacking=infra_lacking, percent=5)
    assert drop is dropped


@pytest.mark.parametrize(
    ("file", "folder"),
    [("test/ops/test_a.py", "test/ops"), ("test_a.py", "."), ("../../test/x.py", "../../test")],
)
def test_folder_of(file, folder):
    assert folder_of(file) == folder
