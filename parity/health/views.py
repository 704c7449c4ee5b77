"""``/healthz``, ``/readyz`` and ``/metrics``: plain Django views, outside DRF's
authentication and throttles, answered by ``parity.health.middleware``. The probes need no
credentials; ``/metrics`` its own bearer token. ``/readyz`` tells anyone whether each component
is ready, and what went wrong (hosts, databases, worker names) only to the metrics token's
bearer or a logged-in staff user."""

import hmac
from importlib import import_module

from django.conf import settings
from django.contrib import auth
from django.db import DatabaseError
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
    detailed = _may_read_details(request)
    body = {
        "status": "unready" if failed else "ready",
        "failed": failed,
        "checks": {
            name: check.detail if detailed else ("ok" if check.ok else "failed")
            for name, check in results.items()
        },
    }
    return JsonResponse(body, status=503 if failed else 200)


def _bearer(request: HttpRequest) -> bool:
    """The request carries ``Authorization: Bearer <PARITY_METRICS_TOKEN>`` (the token set)."""
    token = settings.PARITY_METRICS_TOKEN
    sent = request.headers.get("Authorization", "")
    return bool(token) and hmac.compare_digest(sent.encode(), f"Bearer {token}".encode())


def _may_read_details(request: HttpRequest) -> bool:
    """The metrics token's bearer, or a staff user's session: the probes run ahead of the
    session middleware (``parity.health.middleware``), so a session cookie is read here, and
    only when one is sent. A database that does not answer reads as no session."""
    if _bearer(request):
        return True
    if settings.SESSION_COOKIE_NAME not in request.COOKIES:
        return False
    engine = import_module(settings.SESSION_ENGINE)
    request.session = engine.SessionStore(request.COOKIES[settings.SESSION_COOKIE_NAME])
    try:
        user = auth.get_user(request)
    except DatabaseError:
        return False
    return bool(user.is_active and user.is_staff)


@never_cache
@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """404 unless PARITY_METRICS_TOKEN is set (off by default: the path does not exist);
    then 401 without ``Authorization: Bearer <that token>``."""
    token = settings.PARITY_METRICS_TOKEN
    if not token:
        raise Http404("metrics are off: set PARITY_METRICS_TOKEN")
    if not _bearer(request):
        response = HttpResponse("a bearer token is required\n", status=401)
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(metrics_text(), content_type=CONTENT_TYPE_LATEST)
