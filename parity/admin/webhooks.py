"""Webhook endpoints and the delivery log, scoped like the project's webhooks page: a user who
is not a superuser sees, adds and changes only the endpoints (and deliveries) of projects it
maintains. An endpoint's secret is shown once, in the answer to its creation, never after
(docs/webhooks.md); endpoint writes go through ``parity.services.webhook_endpoints``."""

from django import forms
from django.contrib import admin
from django.template.response import TemplateResponse

from parity.models import Project, WebhookAttempt, WebhookDelivery, WebhookEndpoint
from parity.selectors.webhook_endpoints import url_shown
from parity.services.webhook_endpoints import (
    SUBSCRIBABLE,
    EndpointRejected,
    EndpointRequest,
    webhook_endpoint_check,
    webhook_endpoint_create,
    webhook_endpoint_delete,
    webhook_endpoint_update,
)
from parity.web.access import principal_of, projects_maintained


def _maintained(request) -> list[int]:
    return projects_maintained(principal=principal_of(request))


class WebhookEndpointForm(forms.ModelForm):
    url = forms.URLField(max_length=500, assume_scheme="https")
    events = forms.MultipleChoiceField(
        choices=SUBSCRIBABLE,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None checked: every event.",
    )

    class Meta:
        model = WebhookEndpoint
        fields = ["project", "url", "format", "events", "active"]

    def _post_clean(self) -> None:
        # The service's check, not the ModelForm's: the model is validated (and saved) by the
        # service, with the URL kept when a Slack endpoint's is left empty.
        project = self.cleaned_data.get("project")
        if project is None or self.errors:
            return
        try:
            webhook_endpoint_check(project=project, request=self.endpoint_request())
        except EndpointRejected as exc:
            for field, problems in exc.errors.items():
                self.add_error(field if field in self.fields else None, problems)

    def endpoint_request(self) -> EndpointRequest:
        data = self.cleaned_data
        return EndpointRequest(
            url=data["url"] or getattr(self.instance, "_stored_url", ""),
            format=data["format"],
            events=tuple(data["events"]),
            active=data["active"],
        )


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    form = WebhookEndpointForm
    list_display = ["url_listed", "project", "format", "events", "active"]
    list_filter = ["format", "active"]
    fields = ["project", "url", "format", "events", "active"]

    def get_queryset(self, request):
        queryset = super().get_queryset(request).defer("secret")
        if request.user.is_superuser:
            return queryset
        return queryset.filter(project_id__in=_maintained(request))

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "project" and not request.user.is_superuser:
            kwargs["queryset"] = Project.objects.filter(pk__in=_maintained(request))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def _may(self, request, obj) -> bool:
        return obj is None or request.user.is_superuser or obj.project_id in _maintained(request)

    def has_view_permission(self, request, obj=None) -> bool:
        return super().has_view_permission(request, obj) and self._may(request, obj)

    def has_change_permission(self, request, obj=None) -> bool:
        return super().has_change_permission(request, obj) and self._may(request, obj)

    def has_delete_permission(self, request, obj=None) -> bool:
        return super().has_delete_permission(request, obj) and self._may(request, obj)

    @admin.display(description="URL")
    def url_listed(self, obj: WebhookEndpoint) -> str:
        return url_shown(obj.url, obj.format)

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        if obj is not None and obj.format == "slack":
            # Its URL is its credential: not shown again, kept unless replaced.
            form.base_fields["url"].required = False
            form.base_fields["url"].help_text = "Slack's URL is not shown again: empty keeps it."
        return form

    def get_object(self, request, object_id, from_field=None):
        endpoint = super().get_object(request, object_id, from_field)
        if endpoint is not None and endpoint.format == "slack":
            endpoint._stored_url = endpoint.url
            endpoint.url = ""
        return endpoint

    def save_model(self, request, obj, form, change) -> None:
        # Checked already (the form's _post_clean): what is left to refuse is a race.
        if change:
            webhook_endpoint_update(endpoint=obj, request=form.endpoint_request())
            return
        endpoint, secret = webhook_endpoint_create(
            project=form.cleaned_data["project"], request=form.endpoint_request()
        )
        obj.pk, obj.project, obj.url, obj.format = (
            endpoint.pk,
            endpoint.project,
            endpoint.url,
            endpoint.format,
        )
        request._parity_secret = secret

    def delete_model(self, request, obj) -> None:
        webhook_endpoint_delete(endpoint=obj)

    def response_add(self, request, obj, post_url_continue=None):
        """The new endpoint's secret, shown here once."""
        return TemplateResponse(
            request,
            "admin/parity/webhookendpoint/secret_once.html",
            {
                **self.admin_site.each_context(request),
                "opts": self.opts,
                "endpoint": obj,
                "secret": request._parity_secret,
                "title": "Copy the endpoint's secret now",
            },
            headers={"Cache-Control": "no-store"},
        )


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
    list_filter = ["status", "notice__event"]
    list_select_related = ["notice", "endpoint"]
    readonly_fields = ["notice", "endpoint", "status", "attempts", "next_attempt_at"]
    inlines = [WebhookAttemptInline]

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        return queryset.filter(endpoint__project_id__in=_maintained(request))

    @admin.display(description="event")
    def event(self, obj: WebhookDelivery) -> str:
        return obj.notice.event

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
