"""The dashboard's side of ``parity.web.access``: the same rule, answered the way a browser
needs. A page of a project the visitor may not read sends an anonymous visitor to the login
page and answers 404 to a logged-in one; a JSON endpoint answers 401 or 404 like the API."""

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse

from parity.models import Project
from parity.web.access import Refusal, access_refusal, principal_of, project_access


def project_refusal(
    request: HttpRequest, slug: str, *, triage: bool
) -> tuple[Project | None, Refusal | None]:
    """The project named by ``slug`` (None if there is none) and why the request may not read
    (or triage) it (None if it may)."""
    project = Project.objects.filter(slug=slug).first()
    refusal = access_refusal(
        principal=principal_of(request), project=project, slug=slug, triage=triage
    )
    return project, refusal


def project_page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """An HTML page of a project: ``view(request, project, **kwargs)`` runs only if the request
    may read the project."""

    @wraps(view)
    def wrapper(request: HttpRequest, slug: str, **kwargs) -> HttpResponse:
        project, refusal = project_refusal(request, slug, triage=False)
        if refusal is None:
            return view(request, project, **kwargs)
        if refusal.status == 401:
            return redirect_to_login(request.get_full_path())
        raise Http404(refusal.detail)

    return wrapper


def project_json(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A JSON endpoint of a project: refused as the API refuses (401 or 404, a JSON detail)."""

    @wraps(view)
    def wrapper(request: HttpRequest, slug: str, **kwargs) -> HttpResponse:
        project, refusal = project_refusal(request, slug, triage=False)
        if refusal is None:
            return view(request, project, **kwargs)
        response = JsonResponse({"detail": refusal.detail}, status=refusal.status)
        if refusal.status == 401:
            response["WWW-Authenticate"] = "Token"  # as the API answers
        return response

    return wrapper


def may_triage(request: HttpRequest, project: Project) -> bool:
    return project_access(principal=principal_of(request), project=project).triage


def triage_refusal(request: HttpRequest, project: Project) -> Refusal | None:
    """Why the request may not triage ``project``, which it may read (None: it may)."""
    return access_refusal(
        principal=principal_of(request), project=project, slug=project.slug, triage=True
    )
