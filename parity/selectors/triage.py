"""Triages of a project, newest first, with whether each is stale (no open gap matches it)."""

from django.db.models import QuerySet

from parity.models import Project, Triage


def triages_list(*, project: Project, stale: bool | None = None) -> QuerySet[Triage]:
    triages = Triage.objects.filter(project=project)
    if stale is not None:
        triages = triages.filter(stale=stale)
    return (
        triages.select_related("test", "reason", "issue", "created_by")
        .prefetch_related("backends")
        .order_by("-created_at", "-pk")
    )
