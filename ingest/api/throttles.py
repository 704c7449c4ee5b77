"""Uploads per upload token (PARITY_THROTTLE_UPLOAD; per trust rule for OIDC-minted tokens).

A default DRF throttle (settings ``DEFAULT_THROTTLE_CLASSES``) that counts only the upload
endpoint's POSTs, in the shared cache of ``parity.ratelimit``; everything else passes."""

from django.conf import settings
from rest_framework.throttling import BaseThrottle

from parity.models import UploadToken
from parity.ratelimit import Rate, rate_parse, window_hit, window_wait


class UploadRateThrottle(BaseThrottle):
    rate: Rate | None = None

    def allow_request(self, request, view) -> bool:
        from ingest.api.views import UploadCreateView  # the views import this module's settings

        if not (isinstance(view, UploadCreateView) and isinstance(request.auth, UploadToken)):
            return True
        self.rate = rate_parse(settings.PARITY_THROTTLE_UPLOAD)
        used = window_hit(scope="upload", ident=_ident(request.auth), rate=self.rate)
        return used <= self.rate.count

    def wait(self) -> float | None:
        return window_wait(self.rate) if self.rate else None


def _ident(token: UploadToken) -> str:
    # Tokens an OIDC exchange minted count per trust rule: a CI job that exchanged again would
    # otherwise start a fresh window, where all jobs sharing one long-lived token share one.
    return f"rule-{token.trust_rule_id}" if token.trust_rule_id else str(token.pk)
