"""Who may read and triage a project. One rule (``project_access``) serves the API, the
dashboard pages, their JSON endpoints, the digest preview and the overview listing:

- an upload token reads and triages its own project only;
- a superuser reads and triages everything;
- anyone reads a public project; a member (viewer or maintainer) reads a private one;
- only a maintainer (or a superuser) triages.

A refused request (``access_refusal``) answers 401 when it carried no credentials (log in or
send a token), 404 when the project is private or does not exist (a stranger cannot tell
which), and 403 when the project is readable but the action is not (a viewer triaging, a token
of another project on a public project).

Thin adapters answer a refusal the way each caller needs: the API raises DRF's exceptions
(``project_for_request``); a page (``project_page``, the dashboard's and the digest preview's)
sends an anonymous visitor to the login page and answers 404 to a logged-in one; a JSON
endpoint (``project_json``) answers 401 or 404 like the API.
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, wraps
from typing import NamedTuple

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from rest_framework import exceptions, permissions
from rest_framework.request import Request
from rest_framework.settings import api_settings

from parity.models import Membership, Project, Role, Run, UploadToken, Visibility


class Access(NamedTuple):
    read: bool
    triage: bool


NO_ACCESS = Access(read=False, triage=False)


@dataclass
class Principal:
    """Who is asking: a logged-in Django user, an upload token, or neither (anonymous)."""

    user: object | None = None
    token: UploadToken | None = None

    @cached_property
    def roles(self) -> dict[int, str]:
        """The user's role per project id: one query, whatever the number of projects."""
        if self.user is None:
            return {}
        return dict(Membership.objects.filter(user=self.user).values_list("project_id", "role"))

    @property
    def anonymous(self) -> bool:
        return self.user is None and self.token is None


def principal_of(request: HttpRequest | Request) -> Principal:
    """The request's principal, computed once per request (its roles are then loaded once)."""
    cached = getattr(request, "_parity_principal", None)
    if cached is not None:
        return cached
    token = getattr(request, "auth", None)  # only DRF requests authenticate tokens
    user = getattr(request, "user", None)
    principal = Principal(
        user=user if getattr(user, "pk", None) is not None and user.is_authenticated else None,
        token=token if isinstance(token, UploadToken) else None,
    )
    request._parity_principal = principal
    return principal


def project_access(*, principal: Principal, project: Project) -> Access:
    """The rule: what ``principal`` may do on ``project``."""
    if principal.token is not None:
        own = principal.token.project_id == project.pk
        return Access(read=own, triage=own)
    if principal.user is not None and principal.user.is_superuser:
        return Access(read=True, triage=True)
    role = principal.roles.get(project.pk)
    return Access(
        read=project.visibility == Visibility.PUBLIC or role is not None,
        triage=role == Role.MAINTAINER,
    )


def projects_maintained(*, principal: Principal) -> list[int]:
    """The ids of the projects ``principal`` may administer (triage, webhooks): a superuser's
    are every project's; a user's those it maintains; a token's none (it has no pages)."""
    if principal.user is None:
        return []
    if principal.user.is_superuser:
        return list(Project.objects.values_list("pk", flat=True))
    return [pk for pk, role in principal.roles.items() if role == Role.MAINTAINER]


def projects_readable(*, principal: Principal) -> list[Project]:
    """The projects ``principal`` may read (the overview lists only these)."""
    return [p for p in Project.objects.all() if project_access(principal=principal, project=p).read]


class Refusal(NamedTuple):
    status: int  # 401, 403 or 404
    detail: str


def access_refusal(
    *, principal: Principal, project: Project | None, slug: str, triage: bool
) -> Refusal | None:
    """Why ``principal`` may not read (or triage) ``project`` (None: an unknown slug), or None
    when it may."""
    access = project_access(principal=principal, project=project) if project else NO_ACCESS
    if access.triage if triage else access.read:
        return None
    if principal.anonymous:
        return Refusal(401, "Log in, or send 'Authorization: Token <key>' (a project's token).")
    if access.read:
        return Refusal(403, f"Only maintainers of '{slug}' may triage it.")
    if project is not None and project.visibility == Visibility.PUBLIC:  # a foreign token
        owner = principal.token.project.slug
        return Refusal(403, f"This token belongs to project '{owner}', not '{slug}'.")
    return Refusal(404, f"No project '{slug}'.")  # private or absent: the same answer


# --- The API's side ------------------------------------------------------------------------

_API_ERRORS = {
    401: exceptions.NotAuthenticated,
    403: exceptions.PermissionDenied,
    404: exceptions.NotFound,
}


class ProjectAccess(permissions.BasePermission):
    """Lets every request reach the view: which project it names, and so whether it may read or
    triage it, is known only when the view resolves the project (``project_for_request``)."""

    # Anyone reads a public project: the schema's reads take no credentials too (api/schema.py).
    openapi_anonymous_reads = True

    def has_permission(self, request, view) -> bool:
        return True


def _refusal(
    request: Request, project: Project | None, slug: str, *, reading: bool = False
) -> Refusal | None:
    return access_refusal(
        principal=principal_of(request),
        project=project,
        slug=slug,
        triage=not reading and request.method not in permissions.SAFE_METHODS,
    )


def project_for_request(request: Request, slug: str, *, reading: bool = False) -> Project:
    """The project named by ``slug``, if the request may read it (a GET, or ``reading``: a
    POST that only asks) or triage it (any other method); otherwise 401, 403 or 404 (see the
    module's docstring)."""
    project = Project.objects.filter(slug=slug).first()
    refusal = _refusal(request, project, slug, reading=reading)
    if refusal is not None:
        raise _API_ERRORS[refusal.status](refusal.detail)
    return project


def run_for_request(request: Request, pk: int) -> Run:
    run = Run.objects.select_related("project", "backend").filter(pk=pk).first()
    refusal = _refusal(request, run.project if run else None, run.project.slug if run else "")
    if refusal is None:
        return run
    if refusal.status == 404:  # named by its id: the project's slug is not the stranger's to see
        raise exceptions.NotFound(f"No run {pk}.")
    raise _API_ERRORS[refusal.status](refusal.detail)


def django_user(request: Request):
    """The logged-in user behind the request, or None for an upload token."""
    user = request.user
    return user if getattr(user, "pk", None) is not None else None


# --- The pages' side (the dashboard and the digest preview) ----------------------------------


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


def project_maintainer_page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """An HTML page only a project's maintainers (and superusers) open, for GET and POST alike:
    ``view(request, project, **kwargs)``. An anonymous visitor is sent to log in, a reader is
    answered 403, anyone else 404 (a private project is not confirmed to a stranger)."""

    @wraps(view)
    def wrapper(request: HttpRequest, slug: str, **kwargs) -> HttpResponse:
        project, refusal = project_refusal(request, slug, triage=True)
        if refusal is None:
            return view(request, project, **kwargs)
        if refusal.status == 401:
            return redirect_to_login(request.get_full_path())
        if refusal.status == 403:
            raise PermissionDenied(f"Only maintainers of '{slug}' manage its webhooks.")
        raise Http404(refusal.detail)

    return wrapper


def project_json(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A JSON endpoint of a project: refused as the API refuses (401 or 404, a JSON detail); a
    token it carries is read as the API reads it (``token_principal``)."""

    @wraps(view)
    def wrapper(request: HttpRequest, slug: str, **kwargs) -> HttpResponse:
        project, refusal = _token_or_session_refusal(request, slug)
        if refusal is None:
            return view(request, project, **kwargs)
        response = JsonResponse({"detail": refusal.detail}, status=refusal.status)
        if refusal.status == 401:
            response["WWW-Authenticate"] = "Token"  # as the API answers
        return response

    return wrapper


def project_download(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A file of a project (a CSV). A browser's request is a page's: an anonymous one goes to
    the login page. One carrying a token (``Authorization: Token <key>`` or ``Bearer <key>``:
    a project's or a user's, as the API takes) is a script's: it gets the file, or a refusal
    it can act on (401, 403 or 404, in plain text), never the login page's HTML."""

    @wraps(view)
    def wrapper(request: HttpRequest, slug: str, **kwargs) -> HttpResponse:
        if not _authorization(request):
            return project_page(view)(request, slug, **kwargs)
        project, refusal = _token_or_session_refusal(request, slug)
        if refusal is None:
            return view(request, project, **kwargs)
        response = HttpResponse(
            f"{refusal.detail}\n", status=refusal.status, content_type="text/plain; charset=utf-8"
        )
        if refusal.status == 401:
            response["WWW-Authenticate"] = "Token"
        return response

    return wrapper


def _authorization(request: HttpRequest) -> str:
    return request.META.get("HTTP_AUTHORIZATION", "").strip()


def _token_or_session_refusal(
    request: HttpRequest, slug: str
) -> tuple[Project | None, Refusal | None]:
    """``project_refusal`` of the request's token when it sends one, else of its session. A
    token that is not valid is refused here as the API refuses it (401, or 429 when guessing)."""
    if not _authorization(request):
        return project_refusal(request, slug, triage=False)
    try:
        principal = token_principal(request)
    except exceptions.APIException as exc:
        return None, Refusal(exc.status_code, str(exc.detail))
    project = Project.objects.filter(slug=slug).first()
    return project, access_refusal(principal=principal, project=project, slug=slug, triage=False)


def token_principal(request: HttpRequest) -> Principal:
    """Who the request's ``Authorization`` header says it is, read by the API's own
    authentication (the same tokens, expiry and limit on bad guesses); ``Bearer <key>`` is
    read as ``Token <key>``. Raises DRF's ``APIException`` for a token that is not valid."""
    scheme, _, key = _authorization(request).partition(" ")
    if scheme.lower() == "bearer":
        request.META["HTTP_AUTHORIZATION"] = f"Token {key.strip()}"
    authenticated = Request(
        request, authenticators=[auth() for auth in api_settings.DEFAULT_AUTHENTICATION_CLASSES]
    )
    token, user = authenticated.auth, authenticated.user  # authenticates, or raises why not
    principal = Principal(
        user=user if getattr(user, "pk", None) is not None and user.is_authenticated else None,
        token=token if isinstance(token, UploadToken) else None,
    )
    request._parity_principal = principal  # the view's reads of the principal are this one
    return principal


def may_triage(request: HttpRequest, project: Project) -> bool:
    return project_access(principal=principal_of(request), project=project).triage


def triage_refusal(request: HttpRequest, project: Project) -> Refusal | None:
    """Why the request may not triage ``project``, which it may read (None: it may)."""
    return access_refusal(
        principal=principal_of(request), project=project, slug=project.slug, triage=True
    )
