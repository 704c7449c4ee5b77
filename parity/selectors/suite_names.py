"""A logical suite's name where its tests are known: on the reference (docs/suites.md)."""

from django.db.models import Q

from parity.models import Backend, Project, SuiteBackend


def suite_reference_name(*, project: Project, suite: str) -> str:
    """What the reference's CI calls the logical ``suite`` (the map's name there, or its
    family's), or the name itself: a name CI sent is its own row. One query."""
    entries = SuiteBackend.objects.filter(
        suite__project=project, suite__name=suite, excluded=False
    ).select_related("suite", "backend")
    for entry in entries:
        if entry.backend_id == project.reference_backend_id:
            return entry.name_on_backend
    reference = project.reference_backend
    for entry in entries:
        if reference is not None and entry.backend_id == reference.family_id:
            return entry.name_on_backend
    return suite


def suites_by_reference_name(*, project: Project) -> dict[str, str]:
    """What the reference's CI calls a suite -> the logical suite, for the suites the map names
    there (or on the reference's family); a name not in it is its own suite. One query."""
    reference = project.reference_backend_id
    family = Backend.objects.filter(pk=reference).values("family_id")
    entries = SuiteBackend.objects.filter(suite__project=project).filter(
        Q(backend_id=reference) | Q(backend_id__in=family)
    )
    return {e.name_on_backend: e.suite.name for e in entries.select_related("suite")}
