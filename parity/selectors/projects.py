"""The overview page: every project with its backends and their latest run."""

from dataclasses import dataclass

from django.db.models import OuterRef, Subquery

from parity.models import Project, Run


@dataclass(frozen=True)
class BackendLatest:
    name: str
    is_reference: bool
    last_run: Run | None


@dataclass(frozen=True)
class ProjectOverview:
    project: Project
    backends: list[BackendLatest]


def projects_overview() -> list[ProjectOverview]:
    latest_run = Run.objects.filter(backend=OuterRef("pk")).order_by("-started_at")
    overviews = []
    for project in Project.objects.all():
        backends = project.backends.annotate(last_run_id=Subquery(latest_run.values("pk")[:1]))
        runs = Run.objects.in_bulk([b.last_run_id for b in backends if b.last_run_id])
        overviews.append(
            ProjectOverview(
                project=project,
                backends=[
                    BackendLatest(
                        name=b.name,
                        is_reference=b.pk == project.reference_backend_id,
                        last_run=runs.get(b.last_run_id),
                    )
                    for b in backends
                ],
            )
        )
    return overviews
