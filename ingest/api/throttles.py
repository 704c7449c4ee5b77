"""Uploads per upload token (PARITY_THROTTLE_UPLOAD; per trust rule for OIDC-minted tokens).

The upload endpoint's own DRF throttle (``UploadCreateView.throttle_classes``), counted in the
shared cache of ``parity.ratelimit``; no other view names it, so nothing else is counted."""

from django.conf import settings
from rest_framework.throttling import BaseThrottle

from parity.models import UploadToken
from parity.ratelimit import Rate, rate_parse, window_hit, window_wait


class UploadRateThrottle(BaseThrottle):
    rate: Rate | None = None

    def allow_request(self, request, view) -> bool:
        if not isinstance(request.auth, UploadToken):
            return True  # the view's permission refuses it
        self.rate = rate_parse(settings.PARITY_THROTTLE_UPLOAD)
        used = window_hit(scope="upload", ident=_ident(request.auth), rate=self.rate)
        return used <= self.rate.count

    def wait(self) -> float | None:
        return window_wait(self.rate) if self.rate else None


def _ident(token: UploadToken) -> str:
    # Tokens an OIDC exchange minted count per trust rule: a CI job that exchanged again would
    # otherwise start a fresh window, where all jobs sharing one long-lived token share one.
    return f"rule-{token.trust_rule_id}" if token.trust_rule_id else str(token.pk)
