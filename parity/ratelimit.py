"""Rate limits counted in Django's cache (shared by gunicorn's workers when CACHE_URL is Redis):
fixed windows, one counter per scope, client and window, bumped with the cache's atomic
``incr``. The login limit lives here as a middleware; the upload and bad-token limits are DRF
throttles in ``ingest.api``."""

import hashlib
import math
import time
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.signals import user_login_failed
from django.core.cache import cache
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class Rate:
    count: int
    seconds: int


def rate_parse(text: str) -> Rate:
    """``"30/min"`` -> Rate(30, 60); the period is read from its first letter, as DRF does."""
    count, _, period = text.partition("/")
    try:
        return Rate(count=int(count), seconds=PERIODS[period.strip()[0].lower()])
    except (ValueError, KeyError, IndexError) as exc:
        raise ValueError(f"Bad rate {text!r}: use '<count>/<sec|min|hour|day>'.") from exc


def _key(scope: str, ident: str, rate: Rate, now: float) -> str:
    # Hashed: usernames and addresses are not cache-key-safe, and need not sit in the cache.
    digest = hashlib.sha256(ident.encode()).hexdigest()[:32]
    return f"parity:rl:{scope}:{digest}:{int(now // rate.seconds)}"


def window_wait(rate: Rate, now: float | None = None) -> int:
    """Seconds until the current window ends."""
    now = time.time() if now is None else now
    return max(1, math.ceil(rate.seconds - now % rate.seconds))


def window_used(*, scope: str, ident: str, rate: Rate) -> int:
    return cache.get(_key(scope, ident, rate, time.time()), 0)


def window_hit(*, scope: str, ident: str, rate: Rate) -> int:
    """Count one event in the current window; returns the count so far, this one included."""
    key = _key(scope, ident, rate, time.time())
    cache.add(key, 0, timeout=rate.seconds + 1)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr: the window just ended
        cache.set(key, 1, timeout=rate.seconds + 1)
        return 1


def client_ip(request: HttpRequest) -> str:
    """REMOTE_ADDR, or with PARITY_NUM_PROXIES reverse proxies in front, the address the
    outermost of them saw (entries further left in X-Forwarded-For are the client's to forge)."""
    hops = settings.PARITY_NUM_PROXIES
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if hops and forwarded:
        addresses = [a.strip() for a in forwarded.split(",") if a.strip()]
        return addresses[-min(hops, len(addresses))]
    return request.META.get("REMOTE_ADDR", "")


def _login_ident(request: HttpRequest, username: str) -> str:
    return f"{client_ip(request)}|{username.strip().lower()}"


@receiver(user_login_failed)
def login_failed(sender, credentials: dict, request: HttpRequest | None = None, **kwargs) -> None:
    """Every failed ``authenticate()`` of a request (the login pages) counts against its IP and
    username."""
    if request is None:
        return
    window_hit(
        scope="login",
        ident=_login_ident(request, str(credentials.get("username", ""))),
        rate=rate_parse(settings.PARITY_THROTTLE_LOGIN),
    )


class LoginThrottleMiddleware:
    """Refuses a login POST with 429 once its IP and username used up PARITY_THROTTLE_LOGIN
    failures in the current window: even the right password, so guessing gains nothing."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST" and request.path in {reverse("login"), reverse("admin:login")}:
            rate = rate_parse(settings.PARITY_THROTTLE_LOGIN)
            ident = _login_ident(request, request.POST.get("username", ""))
            if window_used(scope="login", ident=ident, rate=rate) >= rate.count:
                wait = window_wait(rate)
                response = HttpResponse(
                    f"Too many failed logins for this user from your address. "
                    f"Try again in {wait} seconds.\n",
                    status=429,
                    content_type="text/plain; charset=utf-8",
                )
                response["Retry-After"] = str(wait)
                return response
        return self.get_response(request)
