"""`Authorization: Token <key>`: a token belongs to one project and can upload only there.
Failed token authentications are limited per client IP (PARITY_THROTTLE_BAD_TOKEN): past the
limit, a request from that IP answers 429 unless its token is valid and was used from that IP
before, so keys cannot be guessed at speed while the CI sharing the address keeps working."""

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions

from parity.models import UploadToken
from parity.models.projects import token_digest
from parity.projects import upload_token_used
from parity.ratelimit import (
    client_ip,
    mark_add,
    mark_present,
    rate_parse,
    window_hit,
    window_used,
    window_wait,
)


class TokenUser:
    """The principal behind an upload token: authenticated, but never a Django user."""

    is_authenticated = True
    is_staff = False

    def __init__(self, token: UploadToken) -> None:
        self.token = token

    def __str__(self) -> str:
        return str(self.token)


# How long an address stays known for a token it authenticated with (see ``authenticate``).
KNOWN_ADDRESS_SECONDS = 30 * 86400


def _too_many_bad_tokens(rate) -> exceptions.Throttled:
    return exceptions.Throttled(
        wait=window_wait(rate), detail="Too many bad upload tokens from your address."
    )


class UploadTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Token"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        rate, ip = rate_parse(settings.PARITY_THROTTLE_BAD_TOKEN), client_ip(request)
        guessing = window_used(scope="bad-token", ident=ip, rate=rate) >= rate.count
        token = self._token(header)
        if token is None:
            if guessing:
                raise _too_many_bad_tokens(rate)
            window_hit(scope="bad-token", ident=ip, rate=rate)
            raise exceptions.AuthenticationFailed(
                "Invalid or revoked upload token."
                if len(header) == 2
                else "Invalid token header: use 'Authorization: Token <key>'."
            )
        # Past the limit, only a token this address used before the guessing began still
        # works: the CI behind a shared address keeps uploading, while a guess, even a right
        # one, answers the same 429 as a wrong one, so guessing learns nothing.
        known = f"{ip}|{token.pk}"
        if guessing and not mark_present(scope="token-address", ident=known):
            raise _too_many_bad_tokens(rate)
        mark_add(scope="token-address", ident=known, seconds=KNOWN_ADDRESS_SECONDS)
        upload_token_used(token=token)
        return TokenUser(token), token

    @staticmethod
    def _token(header: list[bytes]) -> UploadToken | None:
        if len(header) != 2:
            return None
        return (
            UploadToken.objects.select_related("project")
            .filter(digest=token_digest(header[1].decode(errors="replace")), revoked=False)
            .first()
        )

    def authenticate_header(self, request) -> str:
        return self.keyword


class HasUploadToken(permissions.BasePermission):
    message = "This endpoint needs an upload token: 'Authorization: Token <key>'."
    openapi_schemes = ("uploadToken",)  # not a session: parity.api.schema

    def has_permission(self, request, view) -> bool:
        return isinstance(request.auth, UploadToken)


class UploadTokenScheme(OpenApiAuthenticationExtension):
    target_class = UploadTokenAuthentication
    name = "uploadToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Token <key>`; create one with `manage.py create_upload_token`.",
        }
