"""Reads for the dashboard pages (``parity/dashboard/``), from the engine's roll-up tables only:
``BackendState``, ``Snapshot``, ``FileCell``, ``CurrentOutcome``, ``Gap``, ``ReasonDaily`` and the
runs and uploads themselves. No page aggregates raw results; each selector's query count is
fixed (asserted in ``tests/parity/test_dashboard_selectors.py``)."""

from parity.selectors.dashboard.files import FileGrid, file_grid
from parity.selectors.dashboard.gaps import GapsPage, gaps_page
from parity.selectors.dashboard.heatmap import HEATMAP_SORTS, Heatmap, heatmap
from parity.selectors.dashboard.issues import IssueLink, issue_link
from parity.selectors.dashboard.overview import (
    ProjectCard,
    data_version,
    project_cards,
    project_has_runs,
    score_trends,
)
from parity.selectors.dashboard.reasons import (
    ReasonChart,
    ReasonRow,
    skip_reason_chart,
    skip_reason_rows,
)
from parity.selectors.dashboard.runs import RunsPage, runs_page
from parity.selectors.dashboard.testcases import TestCasePage, testcase_page

__all__ = [
    "HEATMAP_SORTS",
    "FileGrid",
    "GapsPage",
    "Heatmap",
    "IssueLink",
    "ProjectCard",
    "ReasonChart",
    "ReasonRow",
    "RunsPage",
    "TestCasePage",
    "data_version",
    "file_grid",
    "gaps_page",
    "heatmap",
    "issue_link",
    "project_cards",
    "project_has_runs",
    "runs_page",
    "score_trends",
    "skip_reason_chart",
    "skip_reason_rows",
    "testcase_page",
]
