"""The only code that writes test results (and the tests and reasons they name).

``results`` streams an upload's rows (``rows``) into the results table with COPY, resolving
test and reason ids in Python from what ``known`` looked up, and splitting by suite a key that
a document repeats in another suite (``suites``); ``copy_text`` is COPY's text format;
``reasons`` widens reasons' first/last seen dates once the results are committed.
"""

from ingest.writer.reasons import reasons_seen_update
from ingest.writer.results import (
    WriteSummary,
    outcome_counts,
    results_delete_for_run,
    results_write,
)
from ingest.writer.rows import ResultRow

__all__ = [
    "ResultRow",
    "WriteSummary",
    "outcome_counts",
    "reasons_seen_update",
    "results_delete_for_run",
    "results_write",
]
