"""Verify an OIDC ID token (a JWT) into its claims, or refuse it naming the check that failed.

The order matters: the header's ``alg`` first (``none`` and HMAC never pass: an HMAC "secret"
would be the issuer's public key), then ``iss`` against the operator's list, unverified but
before any key is fetched (so a token cannot make this server fetch from a URL it names), then
the key by ``kid``, then the signature, ``iss``, ``aud``, ``exp`` and ``nbf`` with PyJWT.
"""

from dataclasses import dataclass

import jwt
from django.conf import settings

from parity.oidc.issuers import KEYS, KeyCache

ALGORITHMS = ("RS256", "ES256")
MAX_TOKEN_CHARS = 16 * 1024


class OidcRefused(Exception):
    """A token (or its match) refused; ``check`` names what failed: alg, iss, kid, signature,
    aud, exp, a claim's name..."""

    def __init__(self, check: str, message: str) -> None:
        super().__init__(message)
        self.check = check


@dataclass(frozen=True)
class OidcConfig:
    issuers: tuple[str, ...]
    audience: str
    leeway_seconds: int
    cache_seconds: int
    refetch_seconds: int


def oidc_config() -> OidcConfig:
    return OidcConfig(
        issuers=tuple(settings.PARITY_OIDC_ISSUERS),
        audience=settings.PARITY_OIDC_AUDIENCE,
        leeway_seconds=settings.PARITY_OIDC_LEEWAY_SECONDS,
        cache_seconds=settings.PARITY_OIDC_JWKS_CACHE_SECONDS,
        refetch_seconds=settings.PARITY_OIDC_JWKS_REFETCH_SECONDS,
    )


def id_token_verify(*, token: str, config: OidcConfig, keys: KeyCache = KEYS) -> dict:
    """The verified claims of ``token``; ``OidcRefused`` otherwise, ``IssuerUnavailable`` when
    the issuer's keys cannot be fetched."""
    header, unverified = _unverified(token)
    alg = header.get("alg")
    if alg not in ALGORITHMS:
        shown = "none" if str(alg).lower() == "none" else alg
        raise OidcRefused(
            "alg",
            f"The token's alg '{shown}' is not allowed: sign it with {' or '.join(ALGORITHMS)}.",
        )
    issuer = unverified.get("iss")
    if not isinstance(issuer, str) or issuer.rstrip("/") not in config.issuers:
        raise OidcRefused(
            "iss", f"The token's issuer (iss) '{issuer}' is not trusted here (PARITY_OIDC_ISSUERS)."
        )
    kid = str(header.get("kid") or "")
    key = keys.key(
        issuer.rstrip("/"),
        kid,
        cache_seconds=config.cache_seconds,
        refetch_seconds=config.refetch_seconds,
    )
    if key is None:
        raise OidcRefused("kid", f"The issuer {issuer} has no signing key with kid '{kid}'.")
    if key.algorithm_name != alg:
        raise OidcRefused(
            "alg", f"The token's alg '{alg}' is not its key's ({key.algorithm_name})."
        )
    return _decode(token, key, alg, issuer, config, audience=unverified.get("aud"))


def _unverified(token: str) -> tuple[dict, dict]:
    if len(token) > MAX_TOKEN_CHARS:
        raise OidcRefused("token", f"The token is over {MAX_TOKEN_CHARS} characters.")
    try:
        header = jwt.get_unverified_header(token)
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError as exc:
        raise OidcRefused("token", f"The token is not a JWT: {exc}.") from exc
    return header, claims


def _decode(
    token: str, key: jwt.PyJWK, alg: str, issuer: str, config: OidcConfig, *, audience: object
) -> dict:
    try:
        return jwt.decode(
            token,
            key,
            algorithms=[alg],
            audience=config.audience,
            issuer=issuer,
            leeway=config.leeway_seconds,
            options={"require": ["iss", "aud", "exp"]},
        )
    except jwt.InvalidSignatureError as exc:
        raise OidcRefused(
            "signature", f"The token's signature does not verify with {issuer}'s key."
        ) from exc
    except jwt.ExpiredSignatureError as exc:
        raise OidcRefused("exp", "The token expired (exp): request a fresh one.") from exc
    except jwt.InvalidAudienceError as exc:
        raise OidcRefused(
            "aud",
            f"The token's audience (aud) {_shown(audience)} is not '{config.audience}' "
            "(PARITY_OIDC_AUDIENCE): request the token with that audience.",
        ) from exc
    except jwt.ImmatureSignatureError as exc:
        raise OidcRefused("nbf", "The token is not valid yet (nbf, iat).") from exc
    except jwt.MissingRequiredClaimError as exc:
        raise OidcRefused(exc.claim, f"The token has no '{exc.claim}' claim.") from exc
    except jwt.PyJWTError as exc:
        raise OidcRefused("token", f"The token does not verify: {exc}.") from exc


def _shown(audience: object) -> str:
    if isinstance(audience, list):
        return ", ".join(f"'{a}'" for a in audience) or "(none)"
    return f"'{audience}'"
