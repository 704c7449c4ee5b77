"""Reads of raw results, for pages and the API: what cannot come from the engine's roll-ups
because it is about a run that may not be current, a commit other than the current one, or a
test's past. Each reads the results table by its (run, test) index, so its cost follows the
size of the runs it compares, not the history; ``parity.selectors`` (the roll-ups) never
imports them (the ``rollup-reads`` contract), so a page that reads results says so where it
calls one of these.

| page or endpoint                          | read                                      |
|-------------------------------------------|-------------------------------------------|
| ``p/<slug>/runs/<id>/``                   | ``run_detail`` (with its ``run_verdict``) |
| ``api/v1/runs/<id>/verdict/``             | ``run_verdict`` (``?shard=``:             |
|                                           | ``run_verdict_of_shard``)                 |
| ``p/<slug>/tests/<id>/``                  | ``testcase_page``                         |
| ``api/v1/…/tests/<id>/``                  | ``testcase_history``                      |
| ``?aligned=1`` of the heatmap, the gaps   | ``aligned_view``                          |
| page, the parity and gaps endpoints       |                                           |
| ``p/<slug>/transitions/<id>/``, its API   | ``transition_detail``                     |
| ``p/<slug>/compare/<name>/``, its API,    | ``compare_report``, ``compare_preview``   |
| its CSV and its settings' preview         |                                           |
"""

from parity.result_reads.aligned import aligned_view
from parity.result_reads.compare import (
    CompareReport,
    JudgedRow,
    StateChange,
    compare_preview,
    compare_report,
)
from parity.result_reads.history import (
    TestCaseHistory,
    TestCasePage,
    testcase_history,
    testcase_page,
)
from parity.result_reads.run_detail import GAPS_SHOWN as RUN_GAPS_SHOWN
from parity.result_reads.run_detail import RunDetail, run_detail
from parity.result_reads.shard_verdict import run_verdict_of_shard
from parity.result_reads.transitions import MovedList, TransitionDetail, transition_detail
from parity.result_reads.verdict import Verdict, run_verdict

__all__ = [
    "CompareReport",
    "JudgedRow",
    "StateChange",
    "MovedList",
    "RUN_GAPS_SHOWN",
    "RunDetail",
    "TestCaseHistory",
    "TestCasePage",
    "TransitionDetail",
    "Verdict",
    "aligned_view",
    "compare_preview",
    "compare_report",
    "run_detail",
    "run_verdict",
    "run_verdict_of_shard",
    "testcase_history",
    "testcase_page",
    "transition_detail",
]
