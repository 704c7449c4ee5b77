"""The engine's tables: triage is editable, through the triage services (parity.services.triage),
so it takes the project lock, obeys the same rules as the API and gaps and snapshots follow at once;
gaps and snapshots are read-only views of derived data."""

from django import forms
from django.contrib import admin

from parity.models import Gap, Snapshot, Triage
from parity.services.triage import (
    TriageRejected,
    TriageTarget,
    triage_check,
    triage_delete,
    triage_save,
    triages_delete,
)


class TriageForm(forms.ModelForm):
    class Meta:
        model = Triage
        fields = [
            "project",
            "backends",
            "test",
            "reason",
            "match",
            "kind",
            "issue",
            "note",
            "expires_on",
            "condition",
        ]

    def clean(self):
        cleaned = super().clean()
        # On a change the project is read-only, so it is the instance's, not in the form's data.
        project = cleaned.get("project") or getattr(self.instance, "project", None)
        if project is None or self.errors:
            return cleaned  # a field error already; the rules need every field
        target = TriageTarget(
            backends=list(cleaned.get("backends") or []),
            test=cleaned.get("test"),
            reason=cleaned.get("reason"),
            match=cleaned.get("match", "").strip(),
        )
        try:
            triage_check(
                project=project,
                kind=cleaned.get("kind"),
                target=target,
                issue=cleaned.get("issue"),
                note=cleaned.get("note", ""),
                expires_on=cleaned.get("expires_on"),
                expires_was=self.initial.get("expires_on"),
                condition=cleaned.get("condition", ""),
            )
        except TriageRejected as exc:
            self.add_error(exc.field, str(exc))
        return cleaned


@admin.register(Triage)
class TriageAdmin(admin.ModelAdmin):
    form = TriageForm
    list_display = [
        "id",
        "kind",
        "project",
        "test",
        "reason",
        "match",
        "issue",
        "expires_on",
        "stale",
        "expired",
    ]
    list_filter = ["project", "kind", "stale", "expired"]
    raw_id_fields = ["test", "reason", "issue"]
    filter_horizontal = ["backends"]
    readonly_fields = ["stale", "expired", "created_by", "created_at"]
    list_select_related = ["project", "test", "reason", "issue"]

    def get_readonly_fields(self, request, obj=None):
        # A triage stays in its project: its test, reason and gaps are that project's.
        return [*self.readonly_fields, "project"] if obj is not None else self.readonly_fields

    def save_model(self, request, obj, form, change):
        pass  # saved with its backends in save_related: the service needs both at once

    def save_related(self, request, form, formsets, change):
        user = request.user if request.user.is_authenticated else None
        triage_save(triage=form.instance, backends=form.cleaned_data["backends"], user=user)

    def delete_model(self, request, obj):
        triage_delete(triage=obj, user=request.user)

    def delete_queryset(self, request, queryset):
        triages_delete(triages=queryset, user=request.user)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows the engine derives from results: edits would be overwritten by the next run."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Gap)
class GapAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "backend",
        "test",
        "state",
        "reason",
        "is_open",
        "tracked",
        "intended",
        "opened_at",
        "closed_at",
    ]
    list_filter = ["project", "backend__name", "state", "is_open", "tracked", "intended"]
    list_select_related = ["backend__project", "test", "reason"]
    search_fields = ["test__key"]
    show_full_result_count = False


@admin.register(Snapshot)
class SnapshotAdmin(ReadOnlyAdmin):
    list_display = [
        "backend",
        "run",
        "at",
        "score",
        "passing",
        "reference_passing",
        "untracked",
        "test_count",
        "coverage_drop",
    ]
    list_filter = ["project", "backend__name", "coverage_drop"]
    list_select_related = ["backend__project", "run"]
    date_hierarchy = "at"
