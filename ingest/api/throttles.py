"""Uploads per upload token (PARITY_THROTTLE_UPLOAD). A default DRF throttle (settings
``DEFAULT_THROTTLE_CLASSES``) that counts only the upload endpoint's POSTs, in the shared cache
of ``parity.ratelimit``; everything else passes."""

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
        used = window_hit(scope="upload", ident=str(request.auth.pk), rate=self.rate)
        return used <= self.rate.count

    def wait(self) -> float | None:
        return window_wait(self.rate) if self.rate else None
