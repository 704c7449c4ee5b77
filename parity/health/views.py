"""``/healthz``, ``/readyz`` and ``/metrics``: plain Django views, outside DRF's
authentication and throttles, answered by ``parity.health.middleware``. The probes need no
credentials; ``/metrics`` its own bearer token."""

import hmac

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST

from parity.health.checks import readiness
from parity.health.metrics import metrics_text


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


@never_cache
@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """404 unless PARITY_METRICS_TOKEN is set (off by default: the path does not exist);
    then 401 without ``Authorization: Bearer <that token>``."""
    token = settings.PARITY_METRICS_TOKEN
    if not token:
        raise Http404("metrics are off: set PARITY_METRICS_TOKEN")
    sent = request.headers.get("Authorization", "")
    if not hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
        response = HttpResponse("a bearer token is required\n", status=401)
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(metrics_text(), content_type=CONTENT_TYPE_LATEST)
