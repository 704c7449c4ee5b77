"""`Authorization: Token <key>`: a token belongs to one project and can upload only there.
Failed token authentications are limited per client IP (PARITY_THROTTLE_BAD_TOKEN): past the
limit, a request from that IP answers 429 unless its token is valid and was used from that IP
before, so keys cannot be guessed at speed while the CI sharing the address keeps working. A
token an OIDC exchange minted also expires. The same header carries a user's token
(``UserToken``): the request is then that user's, with their roles (docs/access.md); it never
uploads.

`Authorization: Bearer <OIDC ID token>` authenticates the OIDC exchange only
(``OidcTokenAuthentication``): the JWT is verified (``parity.oidc.tokens``), and the view
exchanges its claims for a short-lived upload token (docs/oidc.md)."""

import logging

from django.conf import settings
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions

from parity.models import UploadToken, UserToken
from parity.models.projects import token_digest
from parity.oidc.issuers import IssuerUnavailable
from parity.oidc.tokens import OidcRefused, id_token_verify, oidc_config
from parity.ratelimit import (
    client_ip,
    mark_add,
    mark_present,
    rate_parse,
    window_hit,
    window_used,
    window_wait,
)
from parity.services.projects import upload_token_used

logger = logging.getLogger(__name__)


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
        wait=window_wait(rate), detail="Too many bad tokens from your address."
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
        if token is None and len(header) == 2:
            token = self._user_token(header[1])
        if token is None:
            if guessing:
                raise _too_many_bad_tokens(rate)
            window_hit(scope="bad-token", ident=ip, rate=rate)
            raise exceptions.AuthenticationFailed(
                "Invalid or revoked token: neither a project's nor an active user's."
                if len(header) == 2
                else "Invalid token header: use 'Authorization: Token <key>'."
            )
        # Past the limit, only a token this address used before the guessing began still
        # works: the CI behind a shared address keeps uploading, while a guess, even a right
        # one, answers the same 429 as a wrong one, so guessing learns nothing.
        known = f"{ip}|{'u' if isinstance(token, UserToken) else ''}{token.pk}"
        if guessing and not mark_present(scope="token-address", ident=known):
            raise _too_many_bad_tokens(rate)
        if isinstance(token, UserToken):
            mark_add(scope="token-address", ident=known, seconds=KNOWN_ADDRESS_SECONDS)
            upload_token_used(token=token)
            return token.user, token
        if token.expired(timezone.now()):
            raise exceptions.AuthenticationFailed(
                f"This upload token expired at {token.expires_at:%Y-%m-%d %H:%M:%S} UTC: "
                "exchange a fresh OIDC token (POST /api/v1/oidc/exchange/)."
            )
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

    @staticmethod
    def _user_token(key: bytes) -> UserToken | None:
        found = (
            UserToken.objects.select_related("user")
            .filter(digest=token_digest(key.decode(errors="replace")), revoked=False)
            .first()
        )
        return found if found is not None and found.user.is_active else None

    def authenticate_header(self, request) -> str:
        return self.keyword


class HasUploadToken(permissions.BasePermission):
    message = "This endpoint needs an upload token: 'Authorization: Token <key>'."
    openapi_schemes = ("uploadToken",)  # not a session: parity.api.schema

    def has_permission(self, request, view) -> bool:
        return isinstance(request.auth, UploadToken)


class OidcPrincipal:
    """The CI job behind a verified OIDC ID token: it may only exchange it (``claims``)."""

    is_authenticated = True
    is_staff = False

    def __init__(self, claims: dict) -> None:
        self.claims = claims

    def __str__(self) -> str:
        return str(self.claims.get("sub", "oidc"))


class IssuerUnreachable(exceptions.APIException):
    status_code = 503
    default_detail = "The token's issuer cannot be reached for its keys; try again shortly."
    wait = 30  # DRF's handler sends it as Retry-After


class OidcTokenAuthentication(authentication.BaseAuthentication):
    """`Authorization: Bearer <OIDC ID token>`: verified against its issuer's keys, or a 401
    naming the check that failed."""

    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed(
                "Invalid header: use 'Authorization: Bearer <OIDC ID token>'."
            )
        try:
            claims = id_token_verify(token=header[1].decode(errors="replace"), config=oidc_config())
        except OidcRefused as exc:
            logger.warning(
                "oidc: token refused (%s) from %s: %s", exc.check, client_ip(request), exc
            )
            raise exceptions.AuthenticationFailed(str(exc), code=exc.check) from exc
        except IssuerUnavailable as exc:
            raise IssuerUnreachable(f"{exc}; try again shortly.") from exc
        return OidcPrincipal(claims), claims

    def authenticate_header(self, request) -> str:
        return self.keyword


class HasOidcToken(permissions.BasePermission):
    message = "This endpoint needs an OIDC ID token: 'Authorization: Bearer <token>'."

    def has_permission(self, request, view) -> bool:
        return isinstance(request.user, OidcPrincipal)


class OidcTokenScheme(OpenApiAuthenticationExtension):
    target_class = OidcTokenAuthentication
    name = "oidcToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "JWT",
            "description": "An OIDC ID token of a trusted CI issuer (GitHub Actions, GitLab, "
            "Buildkite), requested for the audience PARITY_OIDC_AUDIENCE; docs/oidc.md.",
        }


class UploadTokenScheme(OpenApiAuthenticationExtension):
    target_class = UploadTokenAuthentication
    name = "uploadToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Token <key>`; create one with `manage.py create_upload_token`, or "
            "exchange an OIDC ID token for a short-lived one (`POST /api/v1/oidc/exchange/`). "
            "A user's token (`manage.py create_user_token`) reads and triages with the user's "
            "roles, and never uploads.",
        }
