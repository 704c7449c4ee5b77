"""Test cases and their results (the largest table: no full counts, raw ids)."""

from django.contrib import admin

from parity.models import Result, TestCase


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
