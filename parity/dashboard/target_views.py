"""Targets set and removed from the trend page (docs/targets.md): the maintainers' form beside
the targets table, its writes through ``parity.services.targets`` as the API's. The service's
refusals (the reference, a backend with no score yet) come back as the form's errors, with what
was typed kept."""

import datetime

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from parity import selectors
from parity.models import Project, Target
from parity.services.targets import (
    TargetRejected,
    TargetRequest,
    target_create,
    target_delete,
    target_update,
)
from parity.web.access import may_triage, project_maintainer_page


class TargetForm(forms.Form):
    """A target as a maintainer types it: the score in percent, as the table shows it."""

    backend = forms.ChoiceField(choices=())
    score = forms.FloatField(
        label="Score (%)", min_value=0.01, max_value=100, help_text="e.g. 95 for 95 %."
    )
    due = forms.DateField(label="By", widget=forms.DateInput(attrs={"type": "date"}))
    note = forms.CharField(max_length=2000, required=False)
    rate_weeks = forms.IntegerField(
        label="Rate over (weeks)", min_value=1, max_value=52, initial=4, required=False
    )
    margin_days = forms.IntegerField(
        label="Margin (days)", min_value=0, max_value=365, initial=7, required=False
    )

    def __init__(self, *args, backends: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["backend"].choices = [(n, n) for n in backends]

    def target_request(self) -> TargetRequest:
        data = self.cleaned_data
        return TargetRequest(
            backend=data["backend"],
            score=round(data["score"] / 100, 6),
            due=data["due"],
            note=data["note"],
            rate_weeks=data["rate_weeks"] or 4,
            margin_days=7 if data["margin_days"] is None else data["margin_days"],
        )


class TargetEditForm(forms.Form):
    """A target's score, date and note changed (``target_update``); its denominator stays."""

    target = forms.IntegerField(widget=forms.HiddenInput)
    score = forms.FloatField(label="Score (%)", min_value=0.01, max_value=100)
    due = forms.DateField(label="By", widget=forms.DateInput(attrs={"type": "date"}))
    note = forms.CharField(max_length=2000, required=False)

    @classmethod
    def of(cls, target: Target) -> "TargetEditForm":
        initial = {"target": target.pk, "score": round(target.score * 100, 4), "due": target.due}
        return cls(initial={**initial, "note": target.note}, prefix=f"t{target.pk}")


def target_edits(targets: list[Target], posted: "TargetEditForm | None") -> dict[int, forms.Form]:
    """Each target's edit form by its id, the one just posted (with its errors) in its place."""
    edits = {t.pk: TargetEditForm.of(t) for t in targets}
    if posted is not None:
        edits[posted.pk] = posted
    return edits


def _edit(request: HttpRequest, project: Project, pk: int) -> TargetEditForm | HttpResponse:
    target = get_object_or_404(Target, project=project, pk=pk)
    form = TargetEditForm(request.POST, prefix=f"t{pk}")
    form.pk = pk
    if form.is_valid():
        data = form.cleaned_data
        try:
            target_update(
                target=target,
                score=round(data["score"] / 100, 6),
                due=data["due"],
                note=data["note"],
            )
        except TargetRejected as exc:
            form.add_error(exc.field if exc.field in form.fields else None, str(exc))
        else:
            messages.success(request, f"Target changed: {target}.")
            return redirect(f"{request.get_full_path()}#trend-targets")
    return form


def target_form(
    request: HttpRequest, project: Project, chosen: str | None, *, bound: bool = True
) -> TargetForm | TargetEditForm | HttpResponse | None:
    """The trend page's form: None for a reader, unbound on GET; on a maintainer's POST the
    target set or changed (``edit=<id>``: a redirect back to the page) or the form posted
    with the service's refusal. A reader's POST is refused (403). One query for a maintainer,
    none for a reader. ``bound=False``: the unbound form whatever the method."""
    maintainer = may_triage(request, project)
    if request.method == "POST" and not maintainer:
        raise PermissionDenied("Only the project's maintainers set targets.")
    if not maintainer:
        return None
    # Every backend but the reference, whatever ``?backend=`` narrows the page to.
    backends = [b.name for b in selectors.trend_backends(project=project, name=None)]
    if request.method != "POST" or not bound:
        initial = {"backend": chosen, "due": timezone.now().date() + datetime.timedelta(days=90)}
        return TargetForm(backends=backends, initial=initial)
    edited = request.POST.get("edit", "")
    if edited.isdigit():
        return _edit(request, project, int(edited))
    form = TargetForm(request.POST, backends=backends)
    if form.is_valid():
        try:
            target = target_create(
                project=project, request=form.target_request(), user=request.user
            )
        except TargetRejected as exc:
            form.add_error(exc.field if exc.field in form.fields else None, str(exc))
        else:
            messages.success(request, f"Target set: {target}.")
            return redirect(f"{request.get_full_path()}#trend-targets")
    return form


@require_POST
@project_maintainer_page
def target_remove(request: HttpRequest, project: Project, pk: int) -> HttpResponse:
    target = get_object_or_404(Target, project=project, pk=pk)
    target_delete(target=target)
    messages.success(request, f"Target removed: {target}.")
    back = request.POST.get("next", "")
    trend = reverse("project-trend", args=[project.slug])
    return redirect(back if back.startswith(trend) else trend)
