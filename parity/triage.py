"""Triage services: a maintainer links an issue to a gap, a test or a whole reason, or marks it
intended.

The API, the dashboard and the admin all write triages through these functions, so every write
takes the project lock (triage and the engine's recompute read and write the same rows), checks
the rules once (``triage_check``), and re-applies triages to the open gaps and recounts the
current snapshots in the same transaction: the dashboard's tracked/untracked/intended numbers
move at once, not at the next run.
"""

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction

from ingest.normalize import extract_issue_refs
from parity.engine.triage import triages_refresh
from parity.models import (
    Backend,
    Gap,
    Project,
    Reason,
    TestCase,
    TrackingIssue,
    Triage,
    TriageKind,
)
from parity.models.projects import project_lock

logger = logging.getLogger(__name__)


class TriageRejected(ValueError):
    """The request names something the project lacks, or the triage breaks a rule. ``field``
    names the triage's field at fault, when one is (the admin shows the message beside it)."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class TriageRequest:
    """A triage as the API and the dashboard's form name it: by ids and names."""

    kind: str
    backend: str | None = None  # a backend name; None: every backend
    test: int | None = None  # a TestCase id
    reason: int | None = None  # a Reason id
    gap: int | None = None  # a Gap id: its test on its backend
    issue_url: str = ""
    note: str = ""


def triage_check(
    *,
    project: Project,
    kind: str,
    backend: Backend | None,
    test: TestCase | None,
    reason: Reason | None,
    issue: TrackingIssue | None,
    note: str,
) -> None:
    """The rules of a triage, whichever way it arrives; raises ``TriageRejected``."""
    if (test is None) == (reason is None):
        raise TriageRejected("Triage either one test or one reason.")
    rows = {"backend": backend, "test": test, "reason": reason, "issue": issue}
    for field, row in rows.items():
        if row is not None and row.project_id != project.pk:
            raise TriageRejected(f"The {field} is not in project '{project.slug}'.", field=field)
    if kind == TriageKind.TRACKED and issue is None:
        raise TriageRejected("A tracked triage needs an 'issue_url'.", field="issue")
    if kind == TriageKind.INTENDED and not note.strip():
        raise TriageRejected("An intended triage needs a short 'note' saying why.", field="note")


def triage_create(*, project: Project, request: TriageRequest, user=None) -> Triage:
    """Create the triage ``request`` describes (the API and the dashboard)."""
    with transaction.atomic():
        project = project_lock(project_id=project.pk)
        backend, test, reason = _target(project, request)
        triage = Triage(
            project=project,
            backend=backend,
            test=test,
            reason=reason,
            kind=request.kind,
            issue=tracking_issue_get_or_create(project=project, url=request.issue_url),
            note=request.note,
            created_by=user,
        )
        _triage_write(triage=triage, project=project)
    logger.info("triage %s created in project %s (%s)", triage.pk, project.pk, triage.kind)
    return triage


def triage_save(*, triage: Triage, user=None) -> Triage:
    """Create or change ``triage`` as given, rows and all (the admin's form). ``user`` becomes
    its author when it has none."""
    with transaction.atomic():
        project = project_lock(project_id=triage.project_id)
        if triage.created_by_id is None and user is not None:
            triage.created_by = user
        _triage_write(triage=triage, project=project)
    logger.info("triage %s saved in project %s (%s)", triage.pk, project.pk, triage.kind)
    return triage


def triage_delete(*, triage: Triage) -> None:
    triages_delete(triages=[triage])


def triages_delete(*, triages: Iterable[Triage]) -> None:
    """Delete triages (the admin's bulk delete) and recount, one transaction per project."""
    by_project: dict[int, list[Triage]] = {}
    for triage in triages:
        by_project.setdefault(triage.project_id, []).append(triage)
    for project_id, group in sorted(by_project.items()):
        with transaction.atomic():
            project = project_lock(project_id=project_id)
            for triage in group:
                triage.delete()
            triages_refresh(project=project)
        logger.info("%s triage(s) deleted in project %s", len(group), project_id)


def tracking_issue_get_or_create(*, project: Project, url: str) -> TrackingIssue | None:
    """The project's issue for ``url``, created if new, keyed like issues found in reasons
    (``pytorch/xla#4298``) so a triage and a reason naming one issue share it."""
    url = url.strip()
    if not url:
        return None
    refs = extract_issue_refs(url, issue_url_template=project.issue_url_template)
    kind, key = (refs[0].kind, refs[0].key) if refs else ("url", url[:200])
    issue, created = TrackingIssue.objects.get_or_create(
        project=project, key=key, defaults={"kind": kind, "url": url}
    )
    if not created and not issue.url:
        issue.url = url
        issue.save(update_fields=["url"])
    return issue


def _triage_write(*, triage: Triage, project: Project) -> None:
    triage_check(
        project=project,
        kind=triage.kind,
        backend=triage.backend,
        test=triage.test,
        reason=triage.reason,
        issue=triage.issue,
        note=triage.note,
    )
    triage.note = triage.note.strip()
    triage.save()
    triages_refresh(project=project)
    triage.refresh_from_db(fields=["stale"])


def _target(
    project: Project, request: TriageRequest
) -> tuple[Backend | None, TestCase | None, Reason | None]:
    """The rows ``request`` names, looked up in ``project``."""
    if sum(x is not None for x in (request.gap, request.test, request.reason)) != 1:
        raise TriageRejected("Name exactly one of 'gap', 'test' or 'reason'.")
    if request.gap is not None:
        gap = Gap.objects.filter(project=project, pk=request.gap).select_related("backend").first()
        if gap is None:
            raise TriageRejected(f"No gap {request.gap} in project '{project.slug}'.")
        return gap.backend, gap.test, None
    backend = None
    if request.backend:
        backend = project.backends.filter(name=request.backend).first()
        if backend is None:
            raise TriageRejected(f"Unknown backend '{request.backend}'.")
    if request.test is not None:
        test = TestCase.objects.filter(project=project, pk=request.test).first()
        if test is None:
            raise TriageRejected(f"No test {request.test} in project '{project.slug}'.")
        return backend, test, None
    reason = Reason.objects.filter(project=project, pk=request.reason).first()
    if reason is None:
        raise TriageRejected(f"No reason {request.reason} in project '{project.slug}'.")
    return backend, None, reason
