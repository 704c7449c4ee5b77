"""Reads for pages and the API, from the engine's roll-up tables. No writes here, and no read
of raw results: a run's verdict and detail, the aligned view and a test's history read the
results table and live in ``parity.result_reads`` (the ``rollup-reads`` contract).

One selector per page or endpoint; what several of them read lives in ``fragments``. They
answer with data (counts, states, issue URLs); colours, symbols and labels are the
dashboard's (``parity.dashboard.presenters``).

| page or endpoint                          | selector                                  |
|-------------------------------------------|-------------------------------------------|
| ``/`` (overview) and ``overview.json``    | ``project_cards``, ``score_trends``,      |
|                                           | ``triage_headlines``, ``untracked_burndown`` |
| ``p/<slug>/`` (heatmap)                   | ``heatmap`` (``?by=family``), ``family_tests`` |
| ``p/<slug>/file/``                        | ``file_grid``                             |
| ``p/<slug>/tests/`` (the search box)      | ``testcase_find``                         |
| ``p/<slug>/trend/`` (dated score trend)   | ``trend_backends``, ``score_history``     |
| ``p/<slug>/skip-reasons/`` and its JSON   | ``skip_reason_rows``, ``skip_reason_chart``, |
|                                           | ``skip_categories_current``               |
| ``p/<slug>/queue/`` (triage queue)        | ``triage_queue``                          |
| ``p/<slug>/owners/`` (code owners)        | ``owners_summary``                        |
| ``p/<slug>/gaps/``                        | ``gaps_folded``, ``gaps_page``            |
| ``p/<slug>/gaps.csv``                     | ``gaps_folded``, ``open_gaps_sorted``,    |
|                                           | ``open_gap_lines``                        |
| ``p/<slug>/runs/``                        | ``runs_page``                             |
| ``p/<slug>/suites/`` and its API          | ``suite_matrix``                          |
| ``p/<slug>/transitions/``, its API        | ``transitions_page``, ``transition_get``  |
| ``p/<slug>/compare/`` and each view, its  | ``compare_views_of``, ``compare_view_of``,|
| CSV and API (the kept rows)               | ``compare_backends``, ``compare_kept``    |
| ``p/<slug>/tests/<id>/`` and its API      | ``compare_states_of_test`` (with the      |
|                                           | result reads below)                       |
| ``/`` a project's compare headline        | ``compare_headlines``                     |
| ``p/<slug>/history/settings/`` (preview)  | ``history_preview``                       |
| ``p/<slug>/matrix/`` and ``matrix.csv``   | ``backend_matrix`` (``?by=family``)       |
| ``p/<slug>/matrix/pair/`` and its CSVs    | ``backend_pair``                          |
| ``p/<slug>/exemptions/``                  | ``exemptions_page``, ``exemption_preview``|
| ``p/<slug>/not-applicable/``              | ``declarations``                          |
| ``p/<slug>/file-issue/``                  | ``issue_subject``                         |
| ``api/v1/projects/<slug>/parity/``        | ``parity_overview``                       |
| ``…/gaps/``                               | ``gaps_folded``, ``gaps_list``, ``gaps_window``, |
|                                           | ``gaps_also_failing_attach``              |
| ``…/skip-reasons/``, ``…/<id>/trend/``    | ``skip_reasons_current``, ``reason_trend`` |
| ``…/tests/``                              | ``testcases_search``                      |
| ``…/triage/``                             | ``triages_list``                          |
| ``…/targets/`` (and on the trend page)   | ``targets_progress``                      |
| ``…/manifest/``, ``…/manifest/resolve/``  | ``manifest_build``, ``manifest_resolve``  |
|                                           | ``backend_for_attributes`` (the variant)  |
| ``…/exemptions/export/``                  | ``exemptions_export``                     |
| ``…/exemptions/import/`` (its report)     | ``patterns_covered``                      |

Every project page also asks ``project_has_runs`` (its empty state; one with runs but none
that counts, ``off_branch_runs``), and chart data's ETag ``data_version``."""

from parity.selectors.aligned import Aligned
from parity.selectors.classification import (
    CategoryCount,
    skip_categories_current,
    skip_rules_current,
)
from parity.selectors.compare_views import (
    CompareHeadline,
    KeptReport,
    TestInView,
    compare_backends,
    compare_headlines,
    compare_kept,
    compare_states_of_test,
    compare_view_of,
    compare_views_of,
)
from parity.selectors.declarations import DeclarationRow, declarations
from parity.selectors.exemptions import (
    BackendFiles,
    ExemptionPreview,
    ExemptionsPage,
    exemption_preview,
    exemptions_list,
    exemptions_page,
    patterns_covered,
    triages_list,
)
from parity.selectors.families import (
    AlsoFailing,
    Families,
    FamilyTests,
    families_of,
    family_tests,
    gaps_also_failing_attach,
)
from parity.selectors.files import FileGrid, file_grid
from parity.selectors.fragments import IssueInfo, all_closed, issue_infos, issue_urls
from parity.selectors.gaps import (
    GapsPage,
    GapsQuery,
    gap_is_stale,
    gaps_list,
    gaps_page,
    gaps_window,
    open_gap_lines,
    open_gaps_sorted,
)
from parity.selectors.heatmap import HEATMAP_SORTS, Heatmap, HeatmapQuery, heatmap
from parity.selectors.history_settings import HistoryChange, HistoryPreview, history_preview
from parity.selectors.issue_drafts import IssueSubject, issue_subject
from parity.selectors.list_exports import ExportQuery, ListExport, exemptions_export
from parity.selectors.manifest import (
    Manifest,
    backend_for_attributes,
    manifest_build,
    manifest_resolve,
)
from parity.selectors.matrix import Matrix, PairLists, backend_matrix, backend_pair
from parity.selectors.overview import (
    ProjectCard,
    data_version,
    off_branch_runs,
    project_cards,
    project_has_runs,
    score_trends,
)
from parity.selectors.owners import OwnersSummary, gaps_owners_attach, owners_summary
from parity.selectors.parity import backend_files, parity_overview
from parity.selectors.queue import (
    BackendHeadline,
    BurnDown,
    TriageQueue,
    triage_headlines,
    triage_queue,
    untracked_burndown,
)
from parity.selectors.reasons import (
    REASON_SORTS,
    ReasonChart,
    ReasonRow,
    reason_trend,
    skip_reason_chart,
    skip_reason_rows,
    skip_reasons_current,
)
from parity.selectors.runs import RunsPage, runs_page
from parity.selectors.suite_gaps import (
    UnrunSuite,
    gaps_folded,
    gaps_suite_attach,
    suites_unrun,
)
from parity.selectors.suites import SuiteMatrix, suite_matrix
from parity.selectors.targets import TargetProgress, targets_progress
from parity.selectors.testcases import TestFind, testcase_find, testcases_search
from parity.selectors.transitions import (
    transition_get,
    transitions_list,
    transitions_of_week,
    transitions_page,
)
from parity.selectors.trends import score_history, trend_backends

__all__ = [
    "HistoryChange",
    "HistoryPreview",
    "history_preview",
    "CompareHeadline",
    "KeptReport",
    "TestInView",
    "compare_backends",
    "compare_headlines",
    "compare_kept",
    "compare_states_of_test",
    "compare_view_of",
    "compare_views_of",
    "DeclarationRow",
    "declarations",
    "AlsoFailing",
    "Families",
    "FamilyTests",
    "families_of",
    "family_tests",
    "gaps_also_failing_attach",
    "CategoryCount",
    "skip_categories_current",
    "skip_rules_current",
    "HEATMAP_SORTS",
    "REASON_SORTS",
    "BackendHeadline",
    "BurnDown",
    "TriageQueue",
    "triage_headlines",
    "triage_queue",
    "untracked_burndown",
    "IssueSubject",
    "BackendFiles",
    "ExemptionsPage",
    "Manifest",
    "FileGrid",
    "GapsPage",
    "GapsQuery",
    "Heatmap",
    "HeatmapQuery",
    "ProjectCard",
    "ReasonChart",
    "ReasonRow",
    "RunsPage",
    "TestFind",
    "backend_files",
    "data_version",
    "ExemptionPreview",
    "exemption_preview",
    "exemptions_list",
    "exemptions_page",
    "ExportQuery",
    "ListExport",
    "exemptions_export",
    "patterns_covered",
    "file_grid",
    "gap_is_stale",
    "gaps_list",
    "gaps_folded",
    "suites_unrun",
    "gaps_suite_attach",
    "UnrunSuite",
    "gaps_window",
    "gaps_page",
    "open_gap_lines",
    "open_gaps_sorted",
    "heatmap",
    "Aligned",
    "backend_for_attributes",
    "manifest_build",
    "manifest_resolve",
    "Matrix",
    "PairLists",
    "backend_matrix",
    "backend_pair",
    "IssueInfo",
    "all_closed",
    "issue_infos",
    "issue_subject",
    "issue_urls",
    "owners_summary",
    "gaps_owners_attach",
    "OwnersSummary",
    "parity_overview",
    "off_branch_runs",
    "project_cards",
    "project_has_runs",
    "reason_trend",
    "runs_page",
    "SuiteMatrix",
    "suite_matrix",
    "transition_get",
    "TargetProgress",
    "targets_progress",
    "transitions_list",
    "transitions_of_week",
    "transitions_page",
    "score_trends",
    "skip_reason_chart",
    "skip_reason_rows",
    "skip_reasons_current",
    "testcase_find",
    "testcases_search",
    "triages_list",
    "score_history",
    "trend_backends",
]
