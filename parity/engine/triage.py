"""Triage: a maintainer links an issue to a gap or a whole reason, or marks it intended.

``triage_create`` and ``triage_delete`` are the services the API and the admin call; both
re-apply triages to the open gaps and recount the current snapshots in the same transaction,
so the dashboard's tracked/untracked/intended numbers move at once, not at the next run.
"""

import logging
from dataclasses import dataclass

from django.db import connection, transaction
from psycopg2 import sql

from ingest.normalize import extract_issue_refs
from parity.engine.fragments import reason_has_issue, triage_pick
from parity.engine.snapshots import snapshots_write
from parity.models import (
    Backend,
    BackendState,
    Gap,
    Project,
    Reason,
    TestCase,
    TrackingIssue,
    Triage,
    TriageKind,
)

logger = logging.getLogger(__name__)


class TriageRejected(ValueError):
    """The request names something that does not exist in the project, or lacks a field."""


@dataclass(frozen=True)
class TriageRequest:
    kind: str
    backend: str | None = None  # a backend name; None: every backend
    test: int | None = None  # a TestCase id
    reason: int | None = None  # a Reason id
    gap: int | None = None  # a Gap id: its test on its backend
    issue_url: str = ""
    note: str = ""


def triage_create(*, project: Project, request: TriageRequest, user=None) -> Triage:
    with transaction.atomic():
        # One writer per project at a time: triage and recompute read and write the same rows.
        Project.objects.select_for_update(no_key=True).filter(pk=project.pk).first()
        backend, test, reason = _target(project, request)
        issue = tracking_issue_for_url(project=project, url=request.issue_url)
        if request.kind == TriageKind.TRACKED and issue is None:
            raise TriageRejected("A tracked triage needs an 'issue_url'.")
        if request.kind == TriageKind.INTENDED and not request.note.strip():
            raise TriageRejected("An intended triage needs a short 'note' saying why.")
        triage = Triage.objects.create(
            project=project,
            backend=backend,
            test=test,
            reason=reason,
            kind=request.kind,
            issue=issue,
            note=request.note.strip(),
            created_by=user,
        )
        triages_refresh(project=project)
    logger.info("triage %s created in project %s (%s)", triage.pk, project.pk, triage.kind)
    triage.refresh_from_db(fields=["stale"])
    return triage


def triage_delete(*, triage: Triage) -> None:
    with transaction.atomic():
        project = Project.objects.select_for_update(no_key=True).get(pk=triage.project_id)
        triage.delete()
        triages_refresh(project=project)
    logger.info("triage deleted in project %s", project.pk)


def _target(
    project: Project, request: TriageRequest
) -> tuple[Backend | None, TestCase | None, Reason | None]:
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


def tracking_issue_for_url(*, project: Project, url: str) -> TrackingIssue | None:
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


def triages_refresh(*, project: Project) -> None:
    """After a triage change: re-pick every open gap's triage and recount current snapshots."""
    backend_ids = list(project.backends.values_list("pk", flat=True))
    triages_apply(project_id=project.pk, backend_ids=backend_ids)
    triages_mark_stale(project_id=project.pk)
    reference_run_id = (
        BackendState.objects.filter(backend_id=project.reference_backend_id)
        .values_list("current_run_id", flat=True)
        .first()
    )
    snapshots_write(project=project, backend_ids=backend_ids, reference_run_id=reference_run_id)


# Tracked: an issue links the gap (its triage) or its reason. Intended: its triage says so;
# an intended gap is never counted tracked or untracked.
_APPLY_SQL = sql.SQL(
    """
    UPDATE parity_gap g
    SET triage_id = p.triage_id, intended = p.intended, tracked = p.tracked
    FROM (
        SELECT o.id, t.id AS triage_id,
               coalesce(t.kind = 'intended', false) AS intended,
               t.kind IS DISTINCT FROM 'intended'
                   AND (coalesce(t.kind = 'tracked', false) OR {reason_issue}) AS tracked
        FROM parity_gap o
        LEFT JOIN LATERAL ({pick}) t ON true
        WHERE o.is_open AND o.project_id = %(project)s AND o.backend_id = ANY(%(backends)s)
    ) p
    WHERE g.id = p.id
      AND (g.triage_id, g.intended, g.tracked) IS DISTINCT FROM (p.triage_id, p.intended, p.tracked)
    """
).format(pick=triage_pick("o"), reason_issue=reason_has_issue(sql.SQL("o.reason_id")))

_STALE_SQL = """
UPDATE parity_triage t SET stale = s.stale
FROM (
    SELECT t2.id, NOT EXISTS (
        SELECT 1 FROM parity_gap g
        WHERE g.is_open AND g.project_id = t2.project_id
          AND (t2.backend_id IS NULL OR g.backend_id = t2.backend_id)
          AND (g.test_id = t2.test_id OR g.reason_id = t2.reason_id)
    ) AS stale
    FROM parity_triage t2 WHERE t2.project_id = %(project)s
) s
WHERE t.id = s.id AND t.stale <> s.stale
"""


def triages_apply(*, project_id: int, backend_ids: list[int]) -> None:
    with connection.cursor() as cursor:
        cursor.execute(_APPLY_SQL, {"project": project_id, "backends": backend_ids})


def triages_mark_stale(*, project_id: int) -> None:
    """A triage no open gap matches any more (the test passes now) is stale: clean it up."""
    with connection.cursor() as cursor:
        cursor.execute(_STALE_SQL, {"project": project_id})
