"""Reads for pages and the API, from the engine's roll-up tables. No writes here."""

from parity.selectors.gaps import gap_is_stale, gaps_list, issue_urls
from parity.selectors.parity import backend_files, parity_overview
from parity.selectors.reasons import reason_trend, skip_reasons_current
from parity.selectors.testcases import testcase_history, testcases_search
from parity.selectors.triage import triages_list
from parity.selectors.verdict import run_verdict

__all__ = [
    "backend_files",
    "gap_is_stale",
    "gaps_list",
    "issue_urls",
    "parity_overview",
    "reason_trend",
    "run_verdict",
    "skip_reasons_current",
    "testcase_history",
    "testcases_search",
    "triages_list",
]
