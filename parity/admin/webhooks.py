"""Webhook endpoints (added and changed here), and the delivery log, read only."""

from django import forms
from django.contrib import admin

from parity.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent
from parity.models.fields import Unreadable


class WebhookEndpointForm(forms.ModelForm):
    url = forms.URLField(max_length=500, assume_scheme="https")
    events = forms.MultipleChoiceField(
        choices=WebhookEvent.choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None checked: every event.",
    )

    class Meta:
        model = WebhookEndpoint
        fields = ["project", "url", "format", "events", "active"]


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    form = WebhookEndpointForm
    list_display = ["url", "project", "format", "events", "active"]
    list_filter = ["project", "format", "active"]
    readonly_fields = ["secret_shown", "created_at"]

    def get_fields(self, request, obj=None) -> list[str]:
        # The secret is generated when the endpoint is saved: shown from then on, for the
        # receiver's configuration.
        fields = ["project", "url", "format", "events", "active"]
        return [*fields, "secret_shown", "created_at"] if obj else fields

    @admin.display(description="secret")
    def secret_shown(self, obj: WebhookEndpoint) -> str:
        # An unreadable one says why and what to do (parity.models.fields), instead of a 500.
        if isinstance(obj.secret, Unreadable):
            return f"This secret {obj.secret}"
        return obj.secret


class WebhookAttemptInline(admin.TabularInline):
    model = WebhookAttempt
    fields = ["number", "at", "status_code", "error", "seconds", "next_retry_at", "body_sha256"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = ["pk", "event", "endpoint", "status", "attempts", "next_attempt_at"]
    list_filter = ["status", "notice__event", "endpoint__project"]
    list_select_related = ["notice", "endpoint"]
    readonly_fields = ["notice", "endpoint", "status", "attempts", "next_attempt_at"]
    inlines = [WebhookAttemptInline]

    @admin.display(description="event")
    def event(self, obj: WebhookDelivery) -> str:
        return obj.notice.event

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
