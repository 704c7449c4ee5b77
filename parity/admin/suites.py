"""The suite map: a project's logical suites, their names on each backend, and the backends
that exclude one, with a reason and an issue (docs/suites.md)."""

from django import forms
from django.contrib import admin

from parity.models import Suite, SuiteBackend


class SuiteBackendForm(forms.ModelForm):
    class Meta:
        model = SuiteBackend
        fields = ["backend", "name", "excluded", "reason", "issue_url"]

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("excluded") and not (cleaned.get("reason") or "").strip():
            self.add_error("reason", "An excluded suite needs a reason.")
        return cleaned


class SuiteBackendInline(admin.TabularInline):
    model = SuiteBackend
    form = SuiteBackendForm
    extra = 1

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        # Only the suite's project's backends (its id is in the URL of a change page).
        if db_field.name == "backend" and request.resolver_match.kwargs.get("object_id"):
            suite = Suite.objects.filter(pk=request.resolver_match.kwargs["object_id"]).first()
            if suite is not None:
                kwargs["queryset"] = suite.project.backends.all()
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(Suite)
class SuiteAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "stale_after_hours"]
    list_filter = ["project"]
    search_fields = ["name"]
    inlines = [SuiteBackendInline]
