"""Version transitions as the engine recorded them (``parity.models.Transition``): the
project's list, newest first, one by id, and a week's for the digest. Their
tests are listed from the two runs' results by ``parity.result_reads.transition_detail``."""

from django.core.paginator import Page, Paginator

from parity.models import Project, Transition
from parity.pure.weeks import Week

TRANSITIONS_PER_PAGE = 50


def _transitions(project: Project):
    return Transition.objects.filter(project=project).select_related(
        "project", "backend", "from_run", "to_run"
    )


def transitions_list(*, project: Project):
    """The project's transitions, newest first (a queryset: the API pages it)."""
    return _transitions(project).order_by("-at", "-pk")


def transitions_page(*, project: Project, page: int = 1) -> Page:
    """A page of the project's transitions, newest first."""
    paginator = Paginator(transitions_list(project=project), TRANSITIONS_PER_PAGE)
    return paginator.get_page(page)


def transition_get(*, project: Project, pk: int) -> Transition | None:
    return _transitions(project).filter(pk=pk).first()


def transitions_of_week(
    *, project: Project, week: Week, backend_ids: list[int] | None = None
) -> list[Transition]:
    """The transitions of runs CI ran in ``week``, oldest first; ``backend_ids``: of those."""
    found = _transitions(project).filter(at__gte=week.start, at__lt=week.end)
    if backend_ids is not None:
        found = found.filter(backend_id__in=backend_ids)
    return list(found.order_by("at", "pk"))
