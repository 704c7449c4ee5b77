"""Rows for testing one engine step at a time: runs and results written with the ORM or the
writer (``ingest.writer``), never through the upload API, so a test sees exactly the tables the
step reads and nothing earlier steps would have computed."""

import datetime
import hashlib

from ingest.writer import ResultRow, results_write
from parity.models import (
    Backend,
    BackendState,
    CurrentOutcome,
    Gap,
    GapEvent,
    Outcome,
    Project,
    Reason,
    Run,
    TestCase,
    Upload,
)

# A test's result: an Outcome, or (Outcome, reason text) for a skip or failure with a reason.
Given = Outcome | tuple[Outcome, str]


def at(day: str, hour: int = 12) -> datetime.datetime:
    return datetime.datetime.fromisoformat(day).replace(hour=hour, tzinfo=datetime.UTC)


def backend_of(project: Project, name: str) -> Backend:
    return project.backends.get(name=name)


def run_make(project: Project, backend: str, *, day: str = "2026-04-01", key: str = "") -> Run:
    return Run.objects.create(
        project=project,
        backend=backend_of(project, backend),
        key=key or f"{day}-{backend}",
        commit=hashlib.sha1(f"{day}{backend}{key}".encode()).hexdigest(),
        branch=project.default_branch,
        complete=True,
        started_at=at(day),
    )


def run_at(project: Project, backend: str, at: datetime.datetime, *, name: str = "") -> Run:
    """A complete run of ``backend`` started ``at``, named by the hour unless ``name`` says."""
    name = name or f"{at:%Y%m%d%H}"
    return Run.objects.create(
        project=project,
        backend=backend_of(project, backend),
        key=f"{name}-{backend}",
        commit=hashlib.sha1(f"{name}{backend}".encode()).hexdigest(),
        branch=project.default_branch,
        complete=True,
        started_at=at,
    )


def results_upload(run: Run, results: dict[str, Given]) -> Upload:
    """One upload (a shard) of ``run`` holding ``results``, written by the writer."""
    upload = Upload.objects.create(
        run=run, sha256=hashlib.sha256(repr(results).encode()).hexdigest(), size=0
    )
    rows = []
    for key, result in results.items():
        outcome, text = result if isinstance(result, tuple) else (result, None)
        file, class_name, name = key.split("::")
        rows.append(
            ResultRow(
                key=key,
                file=file,
                class_name=class_name,
                name=name,
                outcome=outcome,
                duration=None,
                message=text or "",
                reason_kind="skip" if text else None,
                reason_text=text,
                reason_fp=hashlib.md5(text.encode()).hexdigest() if text else None,
            )
        )
    results_write(upload=upload, rows=rows)
    return upload


def testcase_of(project: Project, key: str) -> TestCase:
    file, class_name, name = key.split("::")
    test, _ = TestCase.objects.get_or_create(
        project=project, key=key, defaults={"file": file, "class_name": class_name, "name": name}
    )
    return test


def reason_of(project: Project, text: str) -> Reason:
    reason, _ = Reason.objects.get_or_create(
        project=project,
        kind="skip",
        fingerprint=hashlib.md5(text.encode()).hexdigest(),
        defaults={"text": text, "first_seen": at("2026-04-01"), "last_seen": at("2026-04-01")},
    )
    return reason


def current_set(project: Project, backend: str, outcomes: dict[str, Given], *, run: Run) -> None:
    """Make ``run`` the backend's current run with ``outcomes`` as its current outcomes, as the
    current-outcomes step would leave them."""
    target = backend_of(project, backend)
    CurrentOutcome.objects.filter(backend=target).delete()
    for key, result in outcomes.items():
        outcome, text = result if isinstance(result, tuple) else (result, None)
        CurrentOutcome.objects.create(
            project=project,
            backend=target,
            test=testcase_of(project, key),
            outcome=outcome,
            reason=reason_of(project, text) if text else None,
        )
    BackendState.objects.update_or_create(
        backend=target,
        defaults={"project": project, "current_run": run, "test_count": len(outcomes)},
    )


def gap_open(project: Project, backend: str, key: str, state: str, *, run: Run, reason=None) -> Gap:
    return Gap.objects.create(
        project=project,
        backend=backend_of(project, backend),
        test=testcase_of(project, key),
        state=state,
        reason=reason,
        opened_run=run,
        opened_at=run.started_at,
    )


def open_gaps(backend: str = "tpu") -> dict[str, str]:
    gaps = Gap.objects.filter(backend__name=backend, is_open=True)
    return dict(gaps.values_list("test__key", "state"))


def gap_history() -> set[tuple[str, str, str, str, str, int]]:
    """Every gap's story as (backend, test key, what, from state, to state, causing run): its
    opening and closing read from its own row, the changes between from its ``GapEvent``s."""
    story = set()
    for gap in Gap.objects.select_related("backend", "test").prefetch_related("events"):
        name, key = gap.backend.name, gap.test.key
        first = min(gap.events.all(), key=lambda e: (e.at, e.pk), default=None)
        story.add(
            (name, key, "opened", "", first.from_state if first else gap.state, gap.opened_run_id)
        )
        if not gap.is_open:
            story.add((name, key, "closed", gap.state, "", gap.closed_run_id))
    for event in GapEvent.objects.select_related("backend", "gap__test"):
        story.add(
            (
                event.backend.name,
                event.gap.test.key,
                "changed",
                event.from_state,
                event.to_state,
                event.run_id,
            )
        )
    return story
