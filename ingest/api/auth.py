"""`Authorization: Token <key>`: a token belongs to one project and can upload only there.
Failed token authentications are limited per client IP (PARITY_THROTTLE_BAD_TOKEN): past the
limit, every token request from that IP answers 429 before its token is looked at, so keys
cannot be guessed at speed."""

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions

from parity.models import UploadToken
from parity.models.projects import token_digest
from parity.ratelimit import client_ip, rate_parse, window_hit, window_used, window_wait
from parity.services.projects import upload_token_used


class TokenUser:
    """The principal behind an upload token: authenticated, but never a Django user."""

    is_authenticated = True
    is_staff = False

    def __init__(self, token: UploadToken) -> None:
        self.token = token

    def __str__(self) -> str:
        return str(self.token)


class UploadTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Token"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        rate, ip = rate_parse(settings.PARITY_THROTTLE_BAD_TOKEN), client_ip(request)
        if window_used(scope="bad-token", ident=ip, rate=rate) >= rate.count:
            raise exceptions.Throttled(
                wait=window_wait(rate), detail="Too many bad upload tokens from your address."
            )
        if len(header) != 2:
            window_hit(scope="bad-token", ident=ip, rate=rate)
            raise exceptions.AuthenticationFailed(
                "Invalid token header: use 'Authorization: Token <key>'."
            )
        key = header[1].decode(errors="replace")
        token = (
            UploadToken.objects.select_related("project")
            .filter(digest=token_digest(key), revoked=False)
            .first()
        )
        if token is None:
            window_hit(scope="bad-token", ident=ip, rate=rate)
            raise exceptions.AuthenticationFailed("Invalid or revoked upload token.")
        upload_token_used(token=token)
        return TokenUser(token), token

    def authenticate_header(self, request) -> str:
        return self.keyword


class HasUploadToken(permissions.BasePermission):
    message = "This endpoint needs an upload token: 'Authorization: Token <key>'."

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
