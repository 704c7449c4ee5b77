"""Code owners from the dashboard: the owners page's upload, for a project's maintainers. The
service (``parity.services.owners.owners_import``) parses, replaces the rules and matches every
test file again; this view validates the form and goes back to the page."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from parity.dashboard.forms import OwnersUploadForm
from parity.dashboard.triage_views import refused
from parity.services.owners import OwnersRejected, owners_import
from parity.web.access import project_refusal


@require_POST
def owners_upload(request: HttpRequest, slug: str) -> HttpResponse:
    back = reverse("project-owners", args=[slug])
    project, refusal = project_refusal(request, slug, triage=True)
    if refusal is not None:
        return refused(refusal, back)
    form = OwnersUploadForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, f"Owners not imported: {' '.join(form.errors.get('__all__', []))}")
        return redirect(back)
    data = form.cleaned_data
    try:
        imported = owners_import(
            project=project, text=data["text"], name=data["name"], root=data["root"]
        )
    except OwnersRejected as exc:
        messages.error(request, f"Owners not imported: {exc} Nothing changed.")
        return redirect(back)
    skipped = (
        f"; {len(imported.skipped)} line(s) skipped (listed below)" if imported.skipped else ""
    )
    messages.success(
        request,
        f"{imported.rules} rule(s) imported: {imported.owned:,} of {imported.files:,} test "
        f"files have owners{skipped}.",
    )
    return redirect(back)
