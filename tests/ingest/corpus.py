"""The shared JUnit corpus, with the counts our pipeline must produce for each file.

MANIFEST.tsv (next to the corpus) gives a naive element census; ``corpus_exceptions.tsv``
(next to this module) overrides it, one row and one reason per file where our reading
deliberately differs. Both the parser test and API-level tests parametrize over
``corpus_files()``.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from tests.shared_data import CORPUS_DIR

EXCEPTIONS_TSV = Path(__file__).with_name("corpus_exceptions.tsv")
REJECTED = "rejected"


@dataclass(frozen=True)
class Counts:
    total: int
    skipped: int
    failed: int
    error: int


@dataclass(frozen=True)
class CorpusFile:
    path: str  # relative to the corpus folder
    expected: Counts | None  # None: the file must be rejected with a JUnitError
    reason: str | None  # why we differ from MANIFEST's census; None where we agree

    @property
    def absolute(self) -> Path:
        return CORPUS_DIR / self.path


class _Case(Protocol):
    classname: str
    suite: str
    suite_label: str
    name: str
    outcome: str


def corpus_files(corpus_dir: Path = CORPUS_DIR) -> list[CorpusFile]:
    """Every MANIFEST row with our expected counts; [] when the corpus is not there."""
    manifest = corpus_dir / "MANIFEST.tsv"
    if not manifest.is_file():
        return []
    exceptions = {row["path"]: row for row in _read_tsv(EXCEPTIONS_TSV)}
    files = []
    for row in _read_tsv(manifest):
        override = exceptions.get(row["path"])
        if override is not None:
            files.append(CorpusFile(row["path"], _counts(override), override["reason"]))
        elif row["well_formed"] == "yes":
            census = _counts(
                {
                    "total": row["testcases"],
                    "skipped": row["skipped"],
                    "failed": row["failures"],
                    "error": row["errors"],
                }
            )
            files.append(CorpusFile(row["path"], census, None))
        else:
            files.append(CorpusFile(row["path"], None, None))
    return files


def manifest_rows(corpus_dir: Path = CORPUS_DIR) -> dict[str, dict[str, str]]:
    return {row["path"]: row for row in _read_tsv(corpus_dir / "MANIFEST.tsv")}


def exception_rows() -> list[dict[str, str]]:
    return _read_tsv(EXCEPTIONS_TSV)


def count_final_outcomes(cases: Iterable[_Case]) -> Counts:
    """Counts after keeping one case per (classname, name) and suite label, the last one
    written; a case with no classname takes its suite's name, as the pipeline does.

    That is what the writer stores for one document (one result per test per upload, last
    wins; the same key in another suite is another test), so reruns written as repeated
    testcase elements of one suite count once with their final outcome.
    """
    final = {
        (case.classname or case.suite, case.name, case.suite_label): case.outcome for case in cases
    }
    outcomes = list(final.values())
    return Counts(
        total=len(outcomes),
        skipped=outcomes.count("skipped"),
        failed=outcomes.count("failed"),
        error=outcomes.count("error"),
    )


def _counts(row: dict[str, str]) -> Counts | None:
    if row["total"] == REJECTED:
        return None
    return Counts(int(row["total"]), int(row["skipped"]), int(row["failed"]), int(row["error"]))


def _read_tsv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
