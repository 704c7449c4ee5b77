"""Version transitions: the project's list, newest first, and one transition's report (its
tests that went Fail→Pass, Pass→Fail, New and Gone, a page of each, and the exemptions whose
condition stopped or started holding). The lists read the two runs' results
(``parity.result_reads.transition_detail``)."""

from django.http import Http404, HttpRequest, HttpResponse

from parity import result_reads, selectors
from parity.dashboard.views import _page_number, _render_project
from parity.models import Project, TransitionKind
from parity.web.access import project_page

TESTS_PER_PAGE = 100  # of each of a transition's four lists


@project_page
def transitions(request: HttpRequest, project: Project) -> HttpResponse:
    page = selectors.transitions_page(project=project, page=_page_number(request.GET.get("page")))
    return _render_project(request, project, "parity/transitions.html", tab="runs", page=page)


@project_page
def transition_detail(request: HttpRequest, project: Project, pk: int) -> HttpResponse:
    transition = selectors.transition_get(project=project, pk=pk)
    if transition is None:
        raise Http404("No such transition.")
    # Each list pages on its own: ?fail_to_pass=2&gone=3.
    offsets = {
        kind: (_page_number(request.GET.get(kind)) - 1) * TESTS_PER_PAGE
        for kind in TransitionKind.values
    }
    detail = result_reads.transition_detail(
        transition=transition, offsets=offsets, limit=TESTS_PER_PAGE
    )
    sections = [
        (lst, _page_link(request, lst, -1), _page_link(request, lst, 1)) for lst in detail.lists
    ]
    return _render_project(
        request,
        project,
        "parity/transition.html",
        tab="runs",
        detail=detail,
        sections=sections,
    )


def _page_link(request: HttpRequest, moved: result_reads.MovedList, step: int) -> str:
    """The query string of ``moved``'s page ``step`` away (the other lists keep theirs), or ""
    past either end."""
    page = moved.page + step
    if page < 1 or page > moved.pages:
        return ""
    query = request.GET.copy()
    query[moved.kind] = str(page)
    return f"?{query.urlencode()}#{moved.kind}"
