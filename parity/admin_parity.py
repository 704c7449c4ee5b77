"""Admin for the parity engine's tables: triage is editable (through the triage services, so
gaps and snapshots follow at once); gaps and snapshots are read-only views of derived data.

Registered from ``ParityConfig.ready`` (kept apart from ``parity/admin.py``)."""

from django.contrib import admin

from parity.engine.triage import triages_refresh
from parity.models import Gap, Snapshot, Triage


@admin.register(Triage)
class TriageAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "project", "backend", "test", "reason", "issue", "stale"]
    list_filter = ["project", "kind", "stale"]
    raw_id_fields = ["test", "reason", "issue"]
    readonly_fields = ["stale", "created_by", "created_at"]
    list_select_related = ["project", "backend", "test", "reason", "issue"]

    def save_model(self, request, obj, form, change):
        if obj.created_by_id is None and request.user.is_authenticated:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)
        triages_refresh(project=obj.project)

    def delete_model(self, request, obj):
        project = obj.project
        super().delete_model(request, obj)
        triages_refresh(project=project)

    def delete_queryset(self, request, queryset):
        projects = {t.project for t in queryset.select_related("project")}
        super().delete_queryset(request, queryset)
        for project in projects:
            triages_refresh(project=project)


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
