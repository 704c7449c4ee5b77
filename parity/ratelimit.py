"""Rate limits counted in Django's cache (shared by gunicorn's workers when CACHE_URL is Redis):
fixed windows, one counter per scope, client and window, bumped with the cache's atomic
``incr``. The login limit lives here as a middleware; the upload and bad-token limits are DRF
throttles in ``ingest.api``."""

import hashlib
import logging
import math
import time
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.signals import user_login_failed
from django.core.cache import cache
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

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


def _cache_failed(exc: Exception) -> None:
    """The limits fail open: with the cache (Redis) down, nothing is counted and nothing is
    refused. What they guard against is slow by design anyway (upload tokens are 256-bit random
    keys; passwords are hashed), while refusing every CI upload and login for as long as Redis
    is away would stop everyone. Logged, at most once per process every 10 s."""
    global _last_failure_logged
    now = _monotonic()
    if now - _last_failure_logged >= 10:
        _last_failure_logged = now
        logger.warning("rate limits not enforced: the cache is unreachable (%r)", exc)


_last_failure_logged = -math.inf
_monotonic = time.monotonic  # bound now: the tests move ``time`` (the windows' clock) by hand
# Redis' errors (django's RedisCache raises them unwrapped) and the socket's.
CACHE_ERRORS = (RedisError, OSError)


def window_used(*, scope: str, ident: str, rate: Rate) -> int:
    try:
        return cache.get(_key(scope, ident, rate, time.time()), 0)
    except CACHE_ERRORS as exc:
        _cache_failed(exc)
        return 0


def window_hit(*, scope: str, ident: str, rate: Rate) -> int:
    """Count one event in the current window; returns the count so far, this one included
    (0 when the cache is down)."""
    key = _key(scope, ident, rate, time.time())
    try:
        cache.add(key, 0, timeout=rate.seconds + 1)
        try:
            return cache.incr(key)
        except ValueError:  # expired between add and incr: the window just ended
            cache.set(key, 1, timeout=rate.seconds + 1)
            return 1
    except CACHE_ERRORS as exc:
        _cache_failed(exc)
        return 0


def mark_add(*, scope: str, ident: str, seconds: int) -> None:
    """Remember ``ident`` in ``scope`` for ``seconds`` (kept from the first time, not renewed:
    one ``SET NX`` a call)."""
    key = f"parity:mark:{scope}:{hashlib.sha256(ident.encode()).hexdigest()[:32]}"
    try:
        cache.add(key, 1, timeout=seconds)
    except CACHE_ERRORS as exc:
        _cache_failed(exc)


def mark_present(*, scope: str, ident: str) -> bool:
    key = f"parity:mark:{scope}:{hashlib.sha256(ident.encode()).hexdigest()[:32]}"
    try:
        return cache.get(key) is not None
    except CACHE_ERRORS as exc:
        _cache_failed(exc)
        return True  # failing open, as the counters do


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
    username, and against its IP alone (PARITY_THROTTLE_LOGIN_ADDRESS: one password tried over
    many usernames)."""
    if request is None:
        return
    window_hit(
        scope="login",
        ident=_login_ident(request, str(credentials.get("username", ""))),
        rate=rate_parse(settings.PARITY_THROTTLE_LOGIN),
    )
    window_hit(
        scope="login-address",
        ident=client_ip(request),
        rate=rate_parse(settings.PARITY_THROTTLE_LOGIN_ADDRESS),
    )


class LoginThrottleMiddleware:
    """Refuses a login POST with 429 once its IP and username used up PARITY_THROTTLE_LOGIN
    failures in the current window, or its IP used up PARITY_THROTTLE_LOGIN_ADDRESS failures
    over any usernames: even the right password, so guessing gains nothing."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST" and request.path in {reverse("login"), reverse("admin:login")}:
            refused = _login_refused(request)
            if refused is not None:
                return refused
        return self.get_response(request)


def _login_refused(request: HttpRequest) -> HttpResponse | None:
    limits = [
        (
            "login",
            _login_ident(request, request.POST.get("username", "")),
            rate_parse(settings.PARITY_THROTTLE_LOGIN),
            "for this user from your address",
        ),
        (
            "login-address",
            client_ip(request),
            rate_parse(settings.PARITY_THROTTLE_LOGIN_ADDRESS),
            "from your address",
        ),
    ]
    for scope, ident, rate, whose in limits:
        if window_used(scope=scope, ident=ident, rate=rate) >= rate.count:
            wait = window_wait(rate)
            response = HttpResponse(
                f"Too many failed logins {whose}. Try again in {wait} seconds.\n",
                status=429,
                content_type="text/plain; charset=utf-8",
            )
            response["Retry-After"] = str(wait)
            return response
    return None
