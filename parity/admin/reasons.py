"""Canonical skip/failure reasons and the tracking issues they link to."""

from django.contrib import admin

from parity.models import Reason, TrackingIssue


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
