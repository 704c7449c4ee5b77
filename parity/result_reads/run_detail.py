"""One run's page: its CI verdict (``verdict``: the gaps it opens, the gaps it closes, its
coverage), its uploads, and what it lacks against its backend's run before it (the verdict's
baseline), test files grouped by the baseline's upload they came in (a shard, named by its
files).

Works for any run, current or not (a pull request's, an incomplete one): everything is read
from the run's and the baseline's results by the results' (run, test) index, so its cost follows
the two runs' sizes, not the history. A fixed number of queries (``tests/parity/selectors``)."""

import posixpath
from collections import defaultdict
from dataclasses import dataclass

from parity.definitions import is_default_branch
from parity.models import BackendState, Run, Upload, UploadFile
from parity.result_reads.verdict import ClosedGap, Verdict, run_verdict
from parity.selectors.runs import COUNT_FIELDS

GAPS_SHOWN = 500  # of each list, opened (untracked first) and closed (by test)
FILES_SHOWN = 30  # per shard that lacks tests


@dataclass(frozen=True)
class RunUpload:
    upload: Upload
    label: str  # the files it sent
    counts: dict[str, int]


@dataclass(frozen=True)
class MissingFile:
    file: str
    tests: int


@dataclass(frozen=True)
class MissingShard:
    """Tests of the baseline run that this run does not have, from one upload of the baseline
    (``label`` names its files; empty when its results outlived the upload row)."""

    label: str
    tests: int
    files: list[MissingFile]  # most tests first, the first ``FILES_SHOWN``
    file_count: int


@dataclass(frozen=True)
class RunDetail:
    run: Run
    is_current: bool
    is_past: bool  # of the default branch, older than its backend's current run: it opened its gaps
    verdict: Verdict
    closed: list[ClosedGap]  # the first ``GAPS_SHOWN``
    uploads: list[RunUpload]  # oldest first
    missing: list[MissingShard]  # most tests first; empty without a baseline
    missing_tests: int

    @property
    def baseline_run(self) -> int | None:
        return self.verdict.baseline_run


def run_detail(*, run: Run) -> RunDetail:
    """``run`` with its project and backend selected. About ten queries: the verdict's with its
    closed gaps and what the run lacks (up to eight), the files of the baseline's uploads that
    had those tests (one), the uploads with their files (two), whether it is current or past
    (one)."""
    verdict = run_verdict(run=run, gaps_limit=GAPS_SHOWN, closed_limit=GAPS_SHOWN, lacking=True)
    missing = _missing(verdict.lacking)
    current_id, current_started = (
        BackendState.objects.filter(backend_id=run.backend_id)
        .values_list("current_run_id", "current_run__started_at")
        .first()
    ) or (None, None)
    default_branch = is_default_branch(run.branch, run.project.default_branch)
    return RunDetail(
        run=run,
        is_current=current_id == run.pk,
        is_past=default_branch and current_started is not None and current_started > run.started_at,
        verdict=verdict,
        closed=verdict.closed_gaps,
        uploads=_uploads(run),
        missing=missing,
        missing_tests=sum(shard.tests for shard in missing),
    )


def _uploads(run: Run) -> list[RunUpload]:
    uploads = run.uploads.prefetch_related("files").order_by("created_at", "pk")
    return [
        RunUpload(
            upload=upload,
            label=_label(file.name for file in upload.files.all()),
            counts={k: upload.counts.get(k, 0) for k in COUNT_FIELDS},
        )
        for upload in uploads
    ]


def _missing(rows: list[tuple[int, str, int]]) -> list[MissingShard]:
    """The verdict's ``lacking`` rows as shards of the baseline, named by their files."""
    by_upload: dict[int, list[MissingFile]] = defaultdict(list)
    for upload_id, file, tests in rows:
        by_upload[upload_id].append(MissingFile(file=file, tests=tests))
    names: dict[int, list[str]] = defaultdict(list)
    for upload_id, name in UploadFile.objects.filter(upload_id__in=list(by_upload)).values_list(
        "upload_id", "name"
    ):
        names[upload_id].append(name)
    shards = []
    for upload_id, files in by_upload.items():
        files.sort(key=lambda f: (-f.tests, f.file))
        shards.append(
            MissingShard(
                label=_label(names.get(upload_id, [])),
                tests=sum(f.tests for f in files),
                files=files[:FILES_SHOWN],
                file_count=len(files),
            )
        )
    return sorted(shards, key=lambda s: (-s.tests, s.label))


def _label(names) -> str:
    """An upload as CI named it: its file (a shard's report or archive), or the first and how
    many more."""
    names = sorted(posixpath.basename(name) for name in names)
    if len(names) > 1:
        return f"{names[0]} and {len(names) - 1} more"
    return names[0] if names else ""
