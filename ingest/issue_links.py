"""Link canonical reasons to the tracking issues their text references.

The service half of issue linking: ``parity.pure.normalize.issues`` finds the references
(pure), this module stores them. Ingest and re-ingest call it for the reasons an upload created.
"""

from django.db import transaction

from parity.models import Project, Reason, TrackingIssue
from parity.pure.normalize import extract_issue_refs


def reason_issues_link(*, project: Project, reason_ids: list[int]) -> None:
    # Most uploads bring no new reason: checked before the block, whose savepoint (inside the
    # ingest's transaction) would cost two statements for nothing.
    if reason_ids:
        _link(project, reason_ids)


@transaction.atomic
def _link(project: Project, reason_ids: list[int]) -> None:
    reasons = list(Reason.objects.filter(pk__in=reason_ids, project=project))
    refs_by_reason = {
        reason.pk: extract_issue_refs(reason.text, issue_url_template=project.issue_url_template)
        for reason in reasons
    }
    keys = {ref.key: ref for refs in refs_by_reason.values() for ref in refs}
    if not keys:
        return
    TrackingIssue.objects.bulk_create(
        [TrackingIssue(project=project, kind=r.kind, key=r.key, url=r.url) for r in keys.values()],
        ignore_conflicts=True,
    )
    issue_ids = dict(
        TrackingIssue.objects.filter(project=project, key__in=keys).values_list("key", "pk")
    )
    Through = Reason.issues.through
    Through.objects.bulk_create(
        [
            Through(reason_id=reason_id, trackingissue_id=issue_ids[ref.key])
            for reason_id, refs in refs_by_reason.items()
            for ref in refs
        ],
        ignore_conflicts=True,
    )
