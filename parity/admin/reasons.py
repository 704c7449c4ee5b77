"""Canonical skip/failure reasons and the tracking issues they link to."""

from django.contrib import admin
from django.db import models

from parity.models import Reason, TrackingIssue
from parity.services.triage import reason_issues_set


@admin.register(Reason)
class ReasonAdmin(admin.ModelAdmin):
    list_display = ["text", "project", "kind", "category", "disposition", "last_seen"]
    list_filter = ["project", "kind", "disposition", "category"]
    # The classification's: the project's skip rules give them (edit the rules instead).
    readonly_fields = ["category", "disposition", "rules_version"]
    search_fields = ["text"]
    filter_horizontal = ["issues"]

    def save_related(self, request, form, formsets, change) -> None:
        """The issues through the service, which re-applies triages (tracked follows them)."""
        reason_issues_set(reason=form.instance, issues=form.cleaned_data["issues"])
        for formset in formsets:
            self.save_formset(request, form, formset, change=change)


@admin.register(TrackingIssue)
class TrackingIssueAdmin(admin.ModelAdmin):
    """Issues as their tracker last said (``parity.services.issue_sync``); the sync's fields are
    read only: it overwrites them at its next read."""

    list_display = ["key", "state", "title", "project", "synced_at", "sync_error"]
    list_filter = ["project", "state", "kind"]
    search_fields = ["key", "url", "title"]
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    readonly_fields = [
        "state",
        "title",
        "labels",
        "assignee",
        "closed_at",
        "etag",
        "synced_at",
        "sync_error",
    ]
