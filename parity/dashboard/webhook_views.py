"""A project's webhooks page, for its maintainers only (docs/webhooks.md): its endpoints and
their recent deliveries; add, change, remove an endpoint, send it a test event, give it a new
secret. A secret is shown once, in the answer to the request that made it (never stored in a
message or a cookie, never cached), and never again."""

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from parity.dashboard.views import _render_project as render_project
from parity.models import Project, WebhookEndpoint, WebhookFormat
from parity.selectors.webhook_endpoints import (
    DELIVERIES_SHOWN,
    webhook_endpoint_of,
    webhook_endpoints_of,
)
from parity.services.webhook_endpoints import (
    SUBSCRIBABLE,
    EndpointRejected,
    EndpointRequest,
    webhook_endpoint_create,
    webhook_endpoint_delete,
    webhook_endpoint_ping,
    webhook_endpoint_secret_renew,
    webhook_endpoint_update,
)
from parity.web.access import project_maintainer_page


class EndpointForm(forms.Form):
    url = forms.URLField(
        label="URL",
        max_length=500,
        assume_scheme="https",
        help_text="Where parity posts each event. For Slack, the incoming webhook's URL.",
    )
    format = forms.ChoiceField(choices=WebhookFormat.choices, initial=WebhookFormat.JSON)
    events = forms.MultipleChoiceField(
        choices=SUBSCRIBABLE,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: every event.",
    )
    active = forms.BooleanField(required=False, initial=True, help_text="Untick to pause it.")

    def endpoint_request(self) -> EndpointRequest:
        data = self.cleaned_data
        return EndpointRequest(
            url=data["url"],
            format=data["format"],
            events=tuple(data["events"]),
            active=data["active"],
        )

    def rejected(self, exc: EndpointRejected) -> None:
        for field, problems in exc.errors.items():
            self.add_error(field if field in self.fields else None, problems)


class EndpointNewForm(EndpointForm):
    secret = forms.CharField(
        required=False,
        max_length=200,
        strip=True,
        help_text="Leave empty for parity to make one (shown once, after saving).",
    )


class EndpointChangeForm(EndpointForm):
    def __init__(self, *args, slack: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        if slack:  # its URL is its credential: not shown again, kept unless replaced
            self.fields["url"].required = False
            self.fields["url"].help_text = "Slack's URL is not shown again: empty keeps it."


def _page(request: HttpRequest, project: Project, **context) -> HttpResponse:
    return render_project(
        request,
        project,
        "parity/webhooks.html",
        tab="webhooks",
        endpoints=webhook_endpoints_of(project=project),
        deliveries_shown=DELIVERIES_SHOWN,
        **context,
    )


def _endpoint(project: Project, pk: int) -> WebhookEndpoint:
    endpoint = webhook_endpoint_of(project=project, pk=pk)
    if endpoint is None:
        raise Http404(f"No webhook endpoint {pk} in {project.slug}.")
    return endpoint


def _back(project: Project) -> str:
    return reverse("project-webhooks", args=[project.slug])


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
@project_maintainer_page
def webhooks(request: HttpRequest, project: Project) -> HttpResponse:
    """The list, and the new endpoint's form; a saved one answers with its secret, once."""
    form = EndpointNewForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            endpoint, secret = webhook_endpoint_create(
                project=project,
                request=form.endpoint_request(),
                secret=form.cleaned_data["secret"],
            )
        except EndpointRejected as exc:
            form.rejected(exc)
        else:
            return _page(
                request, project, form=EndpointNewForm(), secret_of=endpoint, secret=secret
            )
    return _page(request, project, form=form)


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
@project_maintainer_page
def webhook_change(request: HttpRequest, project: Project, pk: int) -> HttpResponse:
    endpoint = _endpoint(project, pk)
    slack = endpoint.format == WebhookFormat.SLACK
    initial = {
        "url": "" if slack else endpoint.url,
        "format": endpoint.format,
        "events": endpoint.events,
        "active": endpoint.active,
    }
    data = request.POST if request.method == "POST" else None
    form = EndpointChangeForm(data, initial=initial, slack=slack)
    if data is not None and form.is_valid():
        change = form.endpoint_request()
        if not change.url:
            change = EndpointRequest(endpoint.url, change.format, change.events, change.active)
        try:
            webhook_endpoint_update(endpoint=endpoint, request=change)
        except EndpointRejected as exc:
            form.rejected(exc)
        else:
            messages.success(request, f"Webhook endpoint {endpoint.pk} saved.")
            return redirect(_back(project))
    return render_project(
        request,
        project,
        "parity/webhook_change.html",
        tab="webhooks",
        endpoint=endpoint,
        form=form,
    )


@require_POST
@project_maintainer_page
def webhook_delete(request: HttpRequest, project: Project, pk: int) -> HttpResponse:
    endpoint = _endpoint(project, pk)
    webhook_endpoint_delete(endpoint=endpoint)
    messages.success(request, f"Webhook endpoint {pk} removed, with its delivery log.")
    return redirect(_back(project))


@require_POST
@project_maintainer_page
def webhook_ping(request: HttpRequest, project: Project, pk: int) -> HttpResponse:
    delivery = webhook_endpoint_ping(endpoint=_endpoint(project, pk))
    messages.success(
        request,
        f"Test event queued (delivery {delivery.pk}): its status shows below once attempted.",
    )
    return redirect(f"{_back(project)}#endpoint-{pk}")


@never_cache
@require_POST
@project_maintainer_page
def webhook_secret(request: HttpRequest, project: Project, pk: int) -> HttpResponse:
    endpoint = _endpoint(project, pk)
    secret = webhook_endpoint_secret_renew(endpoint=endpoint)
    return _page(request, project, form=EndpointNewForm(), secret_of=endpoint, secret=secret)
