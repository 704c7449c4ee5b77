"""Test cases and their results (the largest table: no full counts, raw ids, one run at a time)."""

from django.contrib import admin
from django.http import HttpResponseRedirect

from parity.models import Result, Run, TestCase


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
    # The table has no index on id (it is partitioned by run, parity.storage.partitions): the
    # list shows one run's results, in the (run, test) index's order, and opens on the newest
    # run's. A result's own page finds it by id alone, reading every partition: listed, not
    # linked.
    ordering = ["test"]
    list_display_links = None

    def changelist_view(self, request, extra_context=None):
        if "run__id__exact" not in request.GET:
            newest = Run.objects.order_by("-pk").values_list("pk", flat=True).first()
            if newest is not None:
                return HttpResponseRedirect(f"{request.path}?run__id__exact={newest}")
        return super().changelist_view(request, extra_context)
