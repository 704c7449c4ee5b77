"""Who may read and triage a project: an upload token of that project, or a logged-in user."""

from django.shortcuts import get_object_or_404
from rest_framework import exceptions, permissions
from rest_framework.request import Request

from parity.models import Project, Run, UploadToken


class ProjectAccess(permissions.BasePermission):
    """Authenticated by an upload token or a session. Which project a token may see is checked
    when the view resolves the project (``project_for_request``)."""

    message = "Send 'Authorization: Token <key>' (an upload token of the project) or log in."

    def has_permission(self, request, view) -> bool:
        if isinstance(request.auth, UploadToken):
            return True
        return bool(request.user and request.user.is_authenticated)


def _check_token(request: Request, project_id: int, slug: str) -> None:
    token = request.auth
    if isinstance(token, UploadToken) and token.project_id != project_id:
        raise exceptions.PermissionDenied(
            f"This token belongs to project '{token.project.slug}', not '{slug}'."
        )


def project_for_request(request: Request, slug: str) -> Project:
    project = get_object_or_404(Project, slug=slug)
    _check_token(request, project.pk, slug)
    return project


def run_for_request(request: Request, pk: int) -> Run:
    run = get_object_or_404(Run.objects.select_related("project", "backend"), pk=pk)
    _check_token(request, run.project_id, run.project.slug)
    return run


def django_user(request: Request):
    """The logged-in user behind the request, or None for an upload token."""
    user = request.user
    return user if getattr(user, "pk", None) is not None else None
