"""Probes answered ahead of every other middleware: an orchestrator calls them on the pod's or
container's own address over plain HTTP, so they must not meet the HTTPS redirect
(``SECURE_SSL_REDIRECT``) nor the ``ALLOWED_HOSTS`` check, which would answer 301 or 400 to a
probe of a healthy process. They read no session, user or CSRF cookie either."""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.urls import ResolverMatch

from parity.health.views import healthz, metrics, readyz

PROBES: dict[str, Callable[[HttpRequest], HttpResponse]] = {
    "/healthz": healthz,
    "/readyz": readyz,
    "/metrics": metrics,
}


class ProbeMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        probe = PROBES.get(request.path_info)
        if probe is None:
            return self.get_response(request)
        # What URL resolving would have set: request metrics (and Sentry or OpenTelemetry, if
        # added) name the request by it.
        request.resolver_match = ResolverMatch(probe, (), {}, url_name=probe.__name__)
        return probe(request)
