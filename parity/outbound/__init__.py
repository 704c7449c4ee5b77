"""The outbound room: every HTTP request parity's server and workers make leaves through here
(``request``), on one HTTP stack, under the egress policy of ``PARITY_OUTBOUND_ALLOW``
(docs/security.md). Nothing else in parity imports an HTTP client (.importlinter,
tests/tools/test_outbound_imports.py).

``url_refusal`` judges a URL a user saves (a webhook endpoint, a tracker template) without
resolving it, so the form says at once why it will never be sent to; each request judges the
addresses its name resolves to then.
"""

from django.conf import settings

from parity.outbound import policy as _policy
from parity.outbound.policy import OutboundError, Policy, Refused, refusal_text, url_shown
from parity.outbound.transport import (
    MAX_BYTES,
    Response,
    TimedOut,
    TooLarge,
    Unreachable,
)
from parity.outbound.transport import request as _request

_PARSED: tuple[str, Policy] | None = None


def policy_configured() -> Policy:
    """The policy the setting gives (parsed again only when the setting changes)."""
    global _PARSED
    text = settings.PARITY_OUTBOUND_ALLOW
    if _PARSED is None or _PARSED[0] != text:
        _PARSED = (text, Policy.parse(text))
    return _PARSED[1]


def request(
    method: str,
    url: str,
    *,
    timeout: float,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
    redirects: int = 0,
    max_bytes: int = MAX_BYTES,
    purpose: str = "",
) -> Response:
    """One request under the configured policy (``parity.outbound.transport.request``)."""
    return _request(
        method,
        url,
        timeout=timeout,
        headers=headers,
        body=body,
        redirects=redirects,
        max_bytes=max_bytes,
        policy=policy_configured(),
        purpose=purpose,
    )


def url_refusal(url: str) -> str:
    """Why ``url`` will never be sent to under the configured policy, as a user reads it
    (what, why, which setting allows it); "" when it may be."""
    why = _policy.url_refusal(url, policy_configured())
    return refusal_text(url, why) if why else ""


__all__ = [
    "OutboundError",
    "Policy",
    "Refused",
    "Response",
    "TimedOut",
    "TooLarge",
    "Unreachable",
    "policy_configured",
    "request",
    "url_refusal",
    "url_shown",
]
