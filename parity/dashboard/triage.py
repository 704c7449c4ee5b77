"""Triage from the dashboard: a project's maintainer (or a superuser) links an issue to a gap,
a test or a reason, or marks it intended. The service ``parity.triage.triage_create`` does the
work (and recounts at once); this view validates the form and sends the user back where they
were."""

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from parity import triage as triage_services
from parity.dashboard.access import project_refusal
from parity.dashboard.forms import TriageForm


@require_POST
def triage_create(request: HttpRequest, slug: str) -> HttpResponse:
    project, refusal = project_refusal(request, slug, triage=True)
    back = _back_url(request, request.POST.get("next"), slug)
    if refusal is not None:
        if refusal.status == 401:
            # Back to the page the form was on after logging in, not to this POST-only URL.
            return redirect_to_login(back)
        raise (PermissionDenied if refusal.status == 403 else Http404)(refusal.detail)
    form = TriageForm(request.POST)
    if not form.is_valid():
        errors = "; ".join(str(e) for errs in form.errors.values() for e in errs)
        messages.error(request, f"Triage not saved: {errors}")
        return redirect(back)
    try:
        triage = triage_services.triage_create(
            project=project,
            request=triage_services.TriageRequest(**form.request_fields()),
            user=request.user,
        )
    except triage_services.TriageRejected as exc:
        messages.error(request, f"Triage not saved: {exc}")
    else:
        what = "linked to its issue" if triage.kind == "tracked" else "marked intended"
        messages.success(request, f"Triage saved: {what}. The numbers are updated.")
    return redirect(back)


def _back_url(request: HttpRequest, url: str | None, slug: str) -> str:
    if url and url_has_allowed_host_and_scheme(
        url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return url
    return reverse("project-gaps", args=[slug])
