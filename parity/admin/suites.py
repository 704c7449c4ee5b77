"""The suite map: a project's logical suites, their names on each backend, and the backends
that exclude one, with a reason and an issue (docs/suites.md)."""

from django.contrib import admin
from django.db import models

from parity.models import Suite, SuiteBackend


class SuiteBackendInline(admin.TabularInline):
    model = SuiteBackend
    fields = ["backend", "name", "excluded", "reason", "issue_url"]
    extra = 1
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        # Only the suite's project's backends (its id is in the URL of a change page).
        if db_field.name == "backend" and request.resolver_match.kwargs.get("object_id"):
            suite = Suite.objects.filter(pk=request.resolver_match.kwargs["object_id"]).first()
            if suite is not None:
                kwargs["queryset"] = suite.project.backends.all()
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(Suite)
class SuiteAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "project",
        "stale_after_hours",
        "promote_after",
        "demote_after",
        "recover_after",
    ]
    list_filter = ["project"]
    search_fields = ["name"]
    inlines = [SuiteBackendInline]
