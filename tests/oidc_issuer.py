"""A local OIDC issuer for the tests: an HTTP server on 127.0.0.1 (a thread) serving its OpenID
configuration and key set, signing ID tokens with the keys it holds, and answering GitHub
Actions' token request (``ACTIONS_ID_TOKEN_REQUEST_URL``) as GitHub does.

    with FakeIssuer() as issuer:
        token = issuer.token(repository="pytorch/xla")        # RS256, kid "rsa-1"
        issuer.token(alg="ES256")                             # its EC key, kid "ec-1"
        issuer.github_env()                                   # the variables a job gets
"""

import base64
import hashlib
import hmac
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa

REQUEST_TOKEN = "github-request-token-for-this-job"


def _rsa():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _jwk(private_key, kid: str, alg: str) -> dict:
    algorithm = jwt.algorithms.RSAAlgorithm if alg == "RS256" else jwt.algorithms.ECAlgorithm
    data = json.loads(algorithm.to_jwk(private_key.public_key()))
    return {**data, "kid": kid, "alg": alg, "use": "sig"}


def _b64(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


class FakeIssuer:
    def __init__(self, audience: str = "parity") -> None:
        self.audience = audience
        self.keys = {
            "rsa-1": (_rsa(), "RS256"),
            "ec-1": (ec.generate_private_key(ec.SECP256R1()), "ES256"),
        }
        self.published = ["rsa-1", "ec-1"]  # the kids its JWKS lists
        self.jwks_fetches = 0
        self.audiences_requested: list[str] = []
        self.github_claims: dict = {}  # what the GitHub endpoint's tokens claim, over defaults
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> "FakeIssuer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    # --- tokens ---

    def claims(self, **overrides) -> dict:
        now = int(time.time())
        claims = {
            "iss": self.url,
            "aud": self.audience,
            "sub": "repo:pytorch/xla:ref:refs/heads/main",
            "repository": "pytorch/xla",
            "repository_id": "123456",
            "repository_owner": "pytorch",
            "ref": "refs/heads/main",
            "workflow": "CI",
            "iat": now,
            "nbf": now,
            "exp": now + 300,
        }
        claims.update(overrides)
        return {k: v for k, v in claims.items() if v is not None}

    def token(self, *, kid: str | None = None, alg: str = "RS256", key=None, **claims) -> str:
        """A signed token of ``claims`` (over defaults). ``key`` signs instead of the kid's own
        key (a bad signature); a ``kid`` not held gets a fresh key (an unknown kid)."""
        kid = kid or ("rsa-1" if alg == "RS256" else "ec-1")
        if kid not in self.keys:
            self.keys[kid] = (_rsa(), "RS256")
        signing = key or self.keys[kid][0]
        return jwt.encode(self.claims(**claims), signing, algorithm=alg, headers={"kid": kid})

    def unsigned_token(self, **claims) -> str:
        """``alg: none``: no signature at all."""
        return (
            f"{_b64({'alg': 'none', 'typ': 'JWT', 'kid': 'rsa-1'})}.{_b64(self.claims(**claims))}."
        )

    def hmac_token(self, secret: bytes, **claims) -> str:
        """HS256 with ``secret`` (PyJWT will not sign with a PEM key, so by hand)."""
        signing_input = (
            f"{_b64({'alg': 'HS256', 'typ': 'JWT', 'kid': 'rsa-1'})}.{_b64(self.claims(**claims))}"
        )
        digest = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
        return f"{signing_input}.{base64.urlsafe_b64encode(digest).rstrip(b'=').decode()}"

    def publish(self, kid: str) -> None:
        """Add ``kid`` (made if new) to the JWKS: a key rotation."""
        if kid not in self.keys:
            self.keys[kid] = (_rsa(), "RS256")
        self.published.append(kid)

    def public_pem(self, kid: str = "rsa-1") -> bytes:
        from cryptography.hazmat.primitives import serialization

        return (
            self.keys[kid][0]
            .public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )

    def github_env(self) -> dict[str, str]:
        """The variables GitHub gives a job with ``permissions: id-token: write``."""
        return {
            "ACTIONS_ID_TOKEN_REQUEST_URL": f"{self.url}/github/token?api-version=2.0",
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN": REQUEST_TOKEN,
        }

    # --- HTTP ---

    def _jwks(self) -> dict:
        return {"keys": [_jwk(self.keys[kid][0], kid, self.keys[kid][1]) for kid in self.published]}

    def _handler(self):
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path == "/.well-known/openid-configuration":
                    return self._json(200, {"issuer": issuer.url, "jwks_uri": f"{issuer.url}/jwks"})
                if parts.path == "/jwks":
                    issuer.jwks_fetches += 1
                    return self._json(200, issuer._jwks())
                if parts.path == "/github/token":
                    return self._github(parse_qs(parts.query))
                return self._json(404, {"message": "Not Found"})

            def _github(self, query: dict) -> None:
                if self.headers.get("Authorization") != f"bearer {REQUEST_TOKEN}":
                    return self._json(401, {"message": "Bad credentials"})
                audience = query.get("audience", [None])[0]
                issuer.audiences_requested.append(audience)
                claims = {**({"aud": audience} if audience else {}), **issuer.github_claims}
                self._json(200, {"count": 1, "value": issuer.token(**claims)})

            def _json(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
