"""``/healthz`` and ``/readyz``: plain Django views, outside DRF's authentication and
throttles, so a load balancer or an orchestrator probes them without a token."""

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from parity.health.checks import readiness


@never_cache
@require_GET
def healthz(request: HttpRequest) -> HttpResponse:
    """The process answers; nothing else is touched, so a restart is never caused by a
    dependency being down (that is what /readyz says)."""
    return JsonResponse({"status": "ok"})


@never_cache
@require_GET
def readyz(request: HttpRequest) -> HttpResponse:
    results = readiness()
    failed = [name for name, check in results.items() if not check.ok]
    body = {
        "status": "unready" if failed else "ready",
        "failed": failed,
        "checks": {name: check.detail for name, check in results.items()},
    }
    return JsonResponse(body, status=503 if failed else 200)
