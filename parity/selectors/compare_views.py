"""A project's compare views, as their list page and the API name them (their settings only:
the report is read from results, ``parity.result_reads.compare_report``)."""

from django.db.models import QuerySet

from parity.models import Backend, CompareView, Project


def compare_views_of(*, project: Project) -> QuerySet[CompareView]:
    return (
        CompareView.objects.filter(project=project)
        .select_related("project", "sample", "basis")
        .order_by("name")
    )


def compare_view_of(*, project: Project, name: str) -> CompareView | None:
    return compare_views_of(project=project).filter(name=name).first()


def compare_backends(*, project: Project) -> QuerySet[Backend]:
    """The variants a compare view may name: every backend of the project."""
    return Backend.objects.filter(project=project).order_by("name")
