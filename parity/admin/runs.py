"""Runs, their uploads (with the raw files kept for re-ingest) and their run manifests."""

from django.contrib import admin

from parity.admin.parity import ReadOnlyAdmin
from parity.models import Run, RunFile, Upload, UploadFile


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


@admin.register(RunFile)
class RunFileAdmin(ReadOnlyAdmin):
    """The run manifests, to answer "why does this file's tests show crashed?". Read-only: the
    uploads that sent them write them, and the gaps were diffed against them. A list of its own
    rather than an inline on the run: a run's manifest can name thousands of files."""

    list_display = ["run", "file", "state", "exit_status", "tests", "duration", "upload"]
    list_filter = ["state", "run__project", "run__backend__name"]
    list_select_related = ["run__backend__project"]
    search_fields = ["file", "run__key", "run__commit"]
    raw_id_fields = ["run", "upload"]
    show_full_result_count = False
