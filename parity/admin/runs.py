"""Runs, their uploads (with the raw files kept for re-ingest) and their run manifests."""

from django.contrib import admin
from django.http import FileResponse, Http404, HttpRequest
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html

from parity.admin.parity import ReadOnlyAdmin
from parity.models import RawFileLeft, Run, RunFile, Upload, UploadFile
from parity.raw_storage import raw_open


class UploadInline(admin.TabularInline):
    model = Upload
    extra = 0
    fields = ["status", "suite", "counts", "error", "size", "created_at", "finished_at"]
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
    fields = ["name", "sha256", "size", "download"]
    readonly_fields = fields
    can_delete = False

    @admin.display(description="raw file")
    def download(self, stored: UploadFile) -> str:
        # Through parity, never the storage's own URL: a bucket is often out of the browser's
        # reach, and MEDIA_ROOT is not served.
        if not stored.pk or not stored.raw.name:
            return "-"
        url = reverse("admin:parity_upload_raw", args=[stored.upload_id, stored.pk])
        return format_html('<a href="{}">download</a>', url)


@admin.register(Upload)
class UploadAdmin(admin.ModelAdmin):
    list_display = ["id", "run", "status", "counts", "size", "created_at", "finished_at"]
    list_filter = ["status", "run__project", "run__backend"]
    list_select_related = ["run__backend__project"]
    readonly_fields = ["sha256", "size", "counts", "created_at", "started_at", "finished_at"]
    raw_id_fields = ["run"]
    inlines = [UploadFileInline]

    def get_urls(self):
        view = self.admin_site.admin_view(self.raw_download)
        raw = path("<int:upload_id>/files/<int:file_id>/raw/", view, name="parity_upload_raw")
        return [raw, *super().get_urls()]

    def raw_download(self, request: HttpRequest, upload_id: int, file_id: int) -> FileResponse:
        """One stored raw file, streamed from its storage (a storage out of reach is a 503)."""
        stored = get_object_or_404(UploadFile, pk=file_id, upload_id=upload_id)
        if not self.has_view_permission(request, stored.upload):
            raise Http404
        try:
            opened = raw_open(stored.raw)
        except FileNotFoundError:
            raise Http404(f"{stored.name}: its raw file is no longer stored") from None
        return FileResponse(opened, as_attachment=True, filename=stored.name)


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


@admin.register(RawFileLeft)
class RawFileLeftAdmin(ReadOnlyAdmin):
    """Raw files whose rows are gone but which the storage refused to delete: the beat deletes
    them again (``parity.tasks.raw_files_left_delete``). Listed so an operator sees an outage's
    leftovers and how often the storage still refuses them."""

    list_display = ["name", "left_at", "attempts"]
    search_fields = ["name"]
