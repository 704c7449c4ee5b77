"""A project's identity page in the admin: pick a preset, edit the rules, paste names from two
backends to see which join, then plan and run a re-key of the stored tests (docs/identity.md).

It lives with ingest, beside the re-key it queues (the parity app never imports ingest); the
project's admin page links to it by its URL name, ``admin:parity_rekey_identity``.
"""

import json

from django import forms
from django.contrib import admin, messages
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path

from ingest.services import RekeyRejected, rekey_request, rekey_start
from parity.models import Project, Rekey
from parity.pure.normalize import RulesError, validate_rules
from parity.pure.normalize.presets import PRESETS, preset_matching, preset_named, preset_rules
from parity.pure.normalize.preview import identity_preview
from parity.pure.nul import nul_message


class IdentityForm(forms.Form):
    rules = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 12, "class": "vLargeTextField identity-rules"}),
        required=False,
        help_text="JSON, as the project's Normalization rules field and import_rules take it.",
    )
    left = forms.CharField(
        label="Names from one backend",
        widget=forms.Textarea(attrs={"rows": 8, "class": "identity-names"}),
        required=False,
        help_text="One a line: classname::name, a pytest node ID or a unittest ID.",
    )
    right = forms.CharField(
        label="Names from another backend",
        widget=forms.Textarea(attrs={"rows": 8, "class": "identity-names"}),
        required=False,
    )

    def clean_rules(self) -> dict:
        text = self.cleaned_data["rules"].strip() or "{}"
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise forms.ValidationError(f"Not JSON: {exc}") from exc
        problem = nul_message(data)
        if problem is not None:
            raise forms.ValidationError(f"The JSON {problem}")
        try:
            self.cleaned_data["parsed"] = validate_rules(data)
        except RulesError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return data


def _initial(project: Project, preset: str) -> dict:
    rules = project.normalization_rules or {}
    left = right = ""
    if preset:
        chosen = preset_named(preset)
        rules = preset_rules(preset)
        left, right = ("\n".join(names) for names in chosen.example)
    return {"rules": json.dumps(rules, indent=2), "left": left, "right": right}


def identity_view(model_admin, request, project_id):
    """GET: the project's rules (or a preset's, ``?preset=``); POST ``preview``: the pasted
    names' IDs; ``plan``: store a re-key of these rules and plan it; ``run``: run a planned one."""
    project = get_object_or_404(Project, pk=project_id)
    # Changing a project's rules is what a re-key does.
    if not request.user.has_perm("parity.change_project"):
        return redirect("admin:parity_project_changelist")
    preset = request.GET.get("preset", "")
    if preset and preset not in {p.name for p in PRESETS}:
        messages.error(request, f"No preset {preset!r}.")
        preset = ""
    form = IdentityForm(request.POST or None, initial=_initial(project, preset))
    action = request.POST.get("action", "")
    if action == "run":
        return _run(request, project)
    preview = saved_preview = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        if action == "plan":
            return _plan(request, project, data["rules"])
        preview = identity_preview(left=data["left"], right=data["right"], rules=data["parsed"])
        saved_preview = identity_preview(
            left=data["left"], right=data["right"], rules=project.normalization()
        )
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": Project._meta,
        "original": project,
        "title": f"Test identity of {project.slug}",
        "form": form,
        "presets": PRESETS,
        "preset_now": preset_matching(project.normalization()),
        "preview": preview,
        "saved_preview": saved_preview,
        "rekeys": Rekey.objects.filter(project=project)[:5],
    }
    return TemplateResponse(request, "admin/parity/project/identity.html", context)


def _plan(request, project: Project, rules: dict):
    try:
        rekey = rekey_request(project=project, rules=rules, user=request.user)
    except RekeyRejected as exc:
        messages.error(request, str(exc))
    else:
        messages.info(
            request,
            f"Re-key {rekey.pk} is being planned: its counts show below when the stored "
            "uploads are read. Nothing changes until you run it.",
        )
    return redirect("admin:parity_rekey_identity", project.pk)


def _run(request, project: Project):
    rekey = Rekey.objects.filter(project=project, pk=request.POST.get("rekey") or 0).first()
    if rekey is None:
        messages.error(request, "No such re-key of this project.")
        return redirect("admin:parity_rekey_identity", project.pk)
    try:
        rekey_start(rekey=rekey)
    except RekeyRejected as exc:
        messages.error(request, str(exc))
    else:
        messages.info(
            request,
            f"Re-key {rekey.pk} is running: the rules are saved and every stored run is "
            "read again under them.",
        )
    return redirect("admin:parity_rekey_identity", project.pk)


@admin.register(Rekey)
class RekeyAdmin(admin.ModelAdmin):
    """Re-keys are made and run from a project's identity page, and kept here to read."""

    list_display = ["pk", "project", "status", "created_at", "finished_at", "created_by"]
    list_filter = ["project", "status"]
    readonly_fields = [f.name for f in Rekey._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False  # made on the identity page, which plans what it stores

    def get_urls(self):
        view = self.admin_site.admin_view(self.identity_view)
        return [
            path("project/<int:project_id>/", view, name="parity_rekey_identity"),
            *super().get_urls(),
        ]

    def identity_view(self, request, project_id):
        return identity_view(self, request, project_id)
