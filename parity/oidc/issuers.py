"""Issuers' signing keys, as their OpenID configuration's ``jwks_uri`` serves them.

Kept per process in memory, not in the shared cache: a key set is small, changes rarely, and a
verification must not depend on Redis being up. A key set is fetched again once it is older
than ``cache_seconds``; a token naming a key id the set lacks (the issuer rotated its keys)
refetches it too, but at most once per ``refetch_seconds`` per issuer, so tokens with made-up
key ids cannot make this server hammer an issuer. When a refetch fails, the keys held are kept.
Only issuers the operator listed are ever fetched (``tokens`` checks ``iss`` first): a token
cannot point this server at a URL of its choosing. Fetches leave through ``parity.outbound``
(the egress policy; up to three redirects, each judged by it).
"""

import json
import logging
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import jwt

from parity import outbound

logger = logging.getLogger(__name__)

FETCH_TIMEOUT_SECONDS = 5.0
MAX_DOCUMENT_BYTES = 512 * 1024
REDIRECTS_MAX = 3
# Only asymmetric keys: a symmetric ("oct") key in a key set must never verify a token, or its
# public JWKS would be the HMAC secret.
KEY_TYPES = {"RSA", "EC"}


class IssuerUnavailable(Exception):
    """The issuer's keys could not be fetched (and none are held): try again later."""


def _get_json(url: str) -> dict:
    answer = outbound.request(
        "GET",
        url,
        headers={"Accept": "application/json"},
        timeout=FETCH_TIMEOUT_SECONDS,
        max_bytes=MAX_DOCUMENT_BYTES,
        redirects=REDIRECTS_MAX,
        purpose="oidc keys",
    )
    if answer.status != 200:
        raise ValueError(f"{url} answered {answer.status}")
    document = json.loads(answer.body)
    if not isinstance(document, dict):
        raise ValueError(f"{url} answered JSON that is not an object")
    return document


def keys_fetch(issuer: str) -> dict[str, jwt.PyJWK]:
    """The issuer's signing keys by key id (OpenID discovery, then its ``jwks_uri``)."""
    configuration = _get_json(f"{issuer}/.well-known/openid-configuration")
    jwks_uri = configuration.get("jwks_uri")
    if not isinstance(jwks_uri, str) or urlsplit(jwks_uri).scheme not in ("https", "http"):
        raise ValueError(f"{issuer}'s OpenID configuration has no jwks_uri")
    keys = {}
    for data in _get_json(jwks_uri).get("keys") or []:
        if not isinstance(data, dict) or data.get("kty") not in KEY_TYPES or not data.get("kid"):
            continue
        if data.get("use", "sig") != "sig":
            continue
        try:
            keys[str(data["kid"])] = jwt.PyJWK(data)
        except jwt.PyJWKError as exc:
            logger.warning("oidc: skipped key %s of %s: %s", data.get("kid"), issuer, exc)
    return keys


@dataclass
class _Held:
    keys: dict[str, jwt.PyJWK]
    fetched_at: float  # time.monotonic()


@dataclass
class KeyCache:
    fetch: object = keys_fetch  # (issuer) -> {kid: PyJWK}; tests count its calls
    _held: dict[str, _Held] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def key(
        self, issuer: str, kid: str, *, cache_seconds: float, refetch_seconds: float
    ) -> jwt.PyJWK | None:
        """The issuer's key ``kid``, or None when the issuer has no such key."""
        with self._lock:  # one fetch at a time per process; the others then find the keys
            held = self._held.get(issuer)
            if held is None or self._due(held, kid, cache_seconds, refetch_seconds):
                held = self._refresh(issuer, held)
            return held.keys.get(kid)

    @staticmethod
    def _due(held: _Held, kid: str, cache_seconds: float, refetch_seconds: float) -> bool:
        """Stale, or lacking ``kid`` (a rotation?) and not refetched within the interval."""
        age = time.monotonic() - held.fetched_at
        return age >= cache_seconds or (kid not in held.keys and age >= refetch_seconds)

    def _refresh(self, issuer: str, held: _Held | None) -> _Held:
        started = time.monotonic()
        try:
            keys = self.fetch(issuer)
        except (outbound.OutboundError, ValueError) as exc:  # an error answer, bad JSON too
            if held is None:
                raise IssuerUnavailable(
                    f"cannot fetch the signing keys of {issuer}: {exc}"
                ) from exc
            logger.warning("oidc: keeping the held keys of %s, the refetch failed: %s", issuer, exc)
            held.fetched_at = started  # and do not retry on every request
            return held
        logger.info(
            "oidc: fetched %s keys of %s in %.2f s", len(keys), issuer, time.monotonic() - started
        )
        self._held[issuer] = _Held(keys=keys, fetched_at=started)
        return self._held[issuer]

    def clear(self) -> None:
        with self._lock:
            self._held.clear()


KEYS = KeyCache()
