from django.contrib import admin

from parity.models import (
    Backend,
    Membership,
    Project,
    Reason,
    Result,
    Run,
    TestCase,
    TrackingIssue,
    Upload,
    UploadFile,
    UploadToken,
)


class BackendInline(admin.TabularInline):
    model = Backend
    extra = 0


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "visibility", "reference_backend", "created_at"]
    list_filter = ["visibility"]
    search_fields = ["slug", "name"]
    inlines = [BackendInline, MembershipInline]

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        # Only the project's own backends can be its reference.
        if db_field.name == "reference_backend" and request.resolver_match.kwargs.get("object_id"):
            kwargs["queryset"] = Backend.objects.filter(
                project_id=request.resolver_match.kwargs["object_id"]
            )
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(Backend)
class BackendAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "aliases"]
    list_filter = ["project"]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    """Who reads a private project (viewer) and who triages (maintainer)."""

    list_display = ["user", "project", "role", "created_at"]
    list_filter = ["project", "role"]
    search_fields = ["user__username", "user__email", "project__slug"]
    autocomplete_fields = ["user"]


@admin.register(UploadToken)
class UploadTokenAdmin(admin.ModelAdmin):
    list_display = ["prefix", "project", "label", "revoked", "created_at", "last_used_at"]
    list_filter = ["project", "revoked"]
    readonly_fields = ["prefix", "created_at", "last_used_at"]


class UploadInline(admin.TabularInline):
    model = Upload
    extra = 0
    fields = ["status", "counts", "error", "size", "created_at", "finished_at"]
    readonly_fields = fields
    show_change_link = True
    can_delete = False


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "backend", "commit", "branch", "complete", "started_at"]
    list_filter = ["project", "backend", "complete"]
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


@admin.register(TestCase)
class TestCaseAdmin(admin.ModelAdmin):
    list_display = ["key", "project", "file", "class_name", "name"]
    list_filter = ["project"]
    search_fields = ["key"]


@admin.register(Result)
class ResultAdmin(admin.ModelAdmin):
    list_display = ["id", "test", "run", "outcome", "duration", "reason"]
    list_filter = ["outcome"]
    list_select_related = ["test", "run__backend__project", "reason"]
    raw_id_fields = ["run", "upload", "test", "reason"]
    show_full_result_count = False  # counting a huge table on every page is slow


@admin.register(Reason)
class ReasonAdmin(admin.ModelAdmin):
    list_display = ["text", "project", "kind", "first_seen", "last_seen"]
    list_filter = ["project", "kind"]
    search_fields = ["text"]
    filter_horizontal = ["issues"]


@admin.register(TrackingIssue)
class TrackingIssueAdmin(admin.ModelAdmin):
    list_display = ["key", "kind", "url", "project"]
    list_filter = ["project", "kind"]
    search_fields = ["key", "url"]


# The digest's admin (subscriptions, deliveries) lives with the digest.
import parity.digest.admin  # noqa: E402,F401
