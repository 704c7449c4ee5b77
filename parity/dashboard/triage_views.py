"""Triage from the dashboard: a project's maintainer (or a superuser) links an issue to a gap,
a test, a reason or a test file, marks it intended, or quarantines it; and on the exemptions
page, writes an exemption for any pattern of tests, or removes one. The services of
``parity.services.triage`` do the work (and recount at once); these views validate the form and send
the user back where they were."""

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from parity import selectors
from parity.dashboard import presenters
from parity.dashboard.forms import ExemptionForm, QueueExemptForm, TriageForm
from parity.models import Project, Triage, TriageKind
from parity.pure.globs import PatternError, pattern_check
from parity.selectors import ExemptionPreview
from parity.services.triage import (
    TriageRejected,
    TriageRequest,
    triage_create,
    triages_create,
    triages_delete,
)
from parity.services.triage import (
    declaration_override as triage_override,
)
from parity.web.access import Refusal, project_refusal

SAVED = {
    TriageKind.TRACKED: "linked to its issue",
    TriageKind.INTENDED: "marked intended",
    TriageKind.QUARANTINE: "quarantined (CI still runs it; its failures do not count)",
}


# The rules' refusals (parity.services.triage) name the API's fields; the pages name what the
# forms show.
_PAGE_WORDS = (
    ("an 'issue_url'", "the URL of an issue that tracks it"),
    ("a short 'note'", "a short note"),
    ("'expires_on'", "The expiry day"),
    (" triage ", " exemption "),
)


def refusal_text(exc: TriageRejected) -> str:
    """A refusal as a page says it: "A tracked exemption needs the URL of an issue that
    tracks it." rather than the API's "needs an 'issue_url'"."""
    text = str(exc)
    for api, page in _PAGE_WORDS:
        text = text.replace(api, page)
    return text


@require_POST
def triage_submit(request: HttpRequest, slug: str) -> HttpResponse:
    back = back_url(request, request.POST.get("next"), reverse("project-gaps", args=[slug]))
    project, refusal = project_refusal(request, slug, triage=True)
    if refusal is not None:
        return refused(refusal, back)
    form = TriageForm(request.POST)
    if not form.is_valid():
        field, errs = next(iter(form.errors.items()))
        return _refused_form(request, back, "; ".join(errs), field)
    try:
        triage = _create(request, project, form)
    except TriageRejected as exc:
        return _refused_form(request, back, refusal_text(exc), exc.field)
    else:
        messages.success(
            request, f"Exemption saved: {SAVED[triage.kind]}. The numbers are updated."
        )
    return redirect(back)


# ``TriageRejected.field`` -> the small form's input that shows the refusal.
_SMALL_FORM_FIELD = {"issue": "issue_url", "issue_url": "issue_url", "note": "note"}


def _refused_form(request: HttpRequest, back: str, error: str, field: str | None) -> HttpResponse:
    """Back to the page with the refusal at its top, where the refused form (named by its
    posted ``form_key``) opens again with what it held and the refusal beside its field too
    (the session carries them one page view; the message stays for a form no longer there)."""
    messages.error(request, f"Exemption not saved: {error}")
    key = request.POST.get("form_key")
    if not key:
        return redirect(back)
    request.session["triage_refused"] = {
        "key": key,
        "error": f"Not saved: {error}",
        "field": _SMALL_FORM_FIELD.get(field or ""),
        **{
            name: request.POST.get(name, "")[:2000]
            for name in ("scope", "kind", "issue_url", "note")
        },
    }
    return redirect(f"{back}#{presenters.triage_anchor(key)}")


@require_POST
def queue_exempt(request: HttpRequest, slug: str) -> HttpResponse:
    """Exempt the triage queue's ticked groups, each a file or a reason on its backend, all in
    one transaction (``triages_create``): all saved, or none."""
    back = back_url(request, request.POST.get("next"), reverse("project-queue", args=[slug]))
    project, refusal = project_refusal(request, slug, triage=True)
    if refusal is not None:
        return refused(refusal, back)
    form = QueueExemptForm(request.POST)
    if not form.is_valid():
        errors = "; ".join(str(e) for errs in form.errors.values() for e in errs)
        messages.error(request, f"Nothing exempted: {errors}")
        return redirect(back)
    requests = [TriageRequest(**fields) for fields in form.requests_fields()]
    try:
        triages = triages_create(project=project, requests=requests, user=request.user)
    except TriageRejected as exc:
        messages.error(request, f"Nothing exempted: {refusal_text(exc)}")
    else:
        kind = SAVED[triages[0].kind]
        messages.success(
            request, f"{len(triages)} group(s) exempted: {kind}. The numbers are updated."
        )
    return redirect(back)


def exemption_save(request: HttpRequest, project: Project, form: ExemptionForm) -> bool:
    """Create the exemption ``form`` (bound to a POST) describes; False, with the errors on the
    form, when it is invalid or the rules refuse it. The caller checked the user may triage."""
    if not form.is_valid():
        return False
    try:
        triage = _create(request, project, form)
    except TriageRejected as exc:
        form.reject(refusal_text(exc), exc.field)
        return False
    messages.success(
        request, f"Exemption saved: {triage.match} {SAVED[triage.kind]}. The numbers are updated."
    )
    return True


def exemption_preview(project: Project, form: ExemptionForm) -> ExemptionPreview | None:
    """What the pattern of ``form`` (bound to a POST) would cover on its backends, nothing
    saved; None, with the error beside its field, when the pattern or a backend is invalid."""
    form.is_valid()
    if "match" in form.errors or "backends" in form.errors:
        return None
    try:
        match = pattern_check(form.cleaned_data["match"])
    except PatternError as exc:
        form.add_error("match", str(exc))
        return None
    return selectors.exemption_preview(
        project=project, match=match, backends=form.cleaned_data["backends"]
    )


@require_POST
def exemption_delete(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    back = back_url(request, request.POST.get("next"), reverse("project-exemptions", args=[slug]))
    project, refusal = project_refusal(request, slug, triage=True)
    if refusal is not None:
        return refused(refusal, back)
    triage = get_object_or_404(
        Triage.objects.select_related("test", "reason"), project=project, pk=pk
    )
    what = presenters.triage_target(triage)
    triages_delete(triages=[triage], user=request.user)
    messages.success(request, f"Exemption removed: {what}. The numbers are updated.")
    return redirect(back)


@require_POST
def declaration_override(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Set a not-applicable declaration aside (``overridden=1``) or restore it (``0``)."""
    back = back_url(
        request, request.POST.get("next"), reverse("project-not-applicable", args=[slug])
    )
    project, refusal = project_refusal(request, slug, triage=True)
    if refusal is not None:
        return refused(refusal, back)
    triage = get_object_or_404(Triage, project=project, pk=pk, kind=TriageKind.NOT_APPLICABLE)
    overridden = request.POST.get("overridden") == "1"
    triage_override(triage=triage, overridden=overridden, user=request.user)
    done = "set aside: its tests count as gaps again" if overridden else "restored"
    messages.success(request, f"Declaration {triage.match or triage.pk} {done}.")
    return redirect(back)


def refused(refusal: Refusal, back: str) -> HttpResponse:
    """A triage the request may not make: log in (then back to the page the form was on, not to
    a POST-only URL), or 403, or 404 for a project it may not read."""
    if refusal.status == 401:
        return redirect_to_login(back)
    raise (PermissionDenied if refusal.status == 403 else Http404)(refusal.detail)


def _create(request: HttpRequest, project: Project, form: TriageForm | ExemptionForm) -> Triage:
    """The triage a valid ``form`` describes, made by the request's user; raises
    ``TriageRejected`` when the rules refuse it."""
    return triage_create(
        project=project,
        request=TriageRequest(**form.request_fields()),
        user=request.user,
    )


def back_url(request: HttpRequest, url: str | None, default: str) -> str:
    """Where to send the user after a form: ``url`` (the page it was on) when it is on this
    site, else ``default``."""
    if url and url_has_allowed_host_and_scheme(
        url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return url
    return default
