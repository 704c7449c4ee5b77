"""Runs and their uploads (with the raw files kept for re-ingest)."""

from django.contrib import admin

from parity.models import Run, Upload, UploadFile


class UploadInline(admin.TabularInline):
    model = Upload
    extra = 0
    fields = ["status", "counts", "error", "size", "created_at", "finished_at"]
    readonly_fields = fields
    show_change_link = True
    can_delete = False


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "project",
        "backend",
        "commit",
        "branch",
        "complete",
        "probe",
        "started_at",
    ]
    list_filter = ["project", "backend", "complete", "probe"]
    search_fields = ["commit", "key"]
    date_hierarchy = "started_at"
    inlines = [UploadInline]


class UploadFileInline(admin.TabularInline):
    model = UploadFile
    extra = 0
    readonly_fields = ["name", "sha256", "size", "raw"]
    can_delete = False


@admin.register(Upload)
class UploadAdmin(admin.ModelAdmin):
    list_display = ["id", "run", "status", "counts", "size", "created_at", "finished_at"]
    list_filter = ["status", "run__project", "run__backend"]
    list_select_related = ["run__backend__project"]
    readonly_fields = ["sha256", "size", "counts", "created_at", "started_at", "finished_at"]
    raw_id_fields = ["run"]
    inlines = [UploadFileInline]
