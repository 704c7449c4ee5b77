"""A local fake of three sign-in providers on 127.0.0.1 (a thread): GitHub (OAuth2 and the API's
``/user``, ``/user/orgs``, ``/user/teams``, paginated as GitHub does), GitLab (OAuth2, its API's
``/user`` and OpenID ``/oauth/userinfo`` with ``groups``) and an OpenID Connect provider
(discovery, authorize, token with an RS256 ID token, userinfo, JWKS).

Whoever the test puts in ``person`` is who signs in next: the authorize endpoints approve at
once, as a provider does for a user already signed in there who approved parity before. Codes
are single-use, tied to their client, redirect URI and PKCE challenge; tokens to their person.

    with FakeProviders() as fake:
        fake.person = Person(login="ada", orgs=["pytorch"], teams=["pytorch/xla-maintainers"])
        env = fake.env()              # PARITY_SIGN_IN_* for the three, the OIDC one's id "corp"
        fake.fail("/github/api/v3/user/orgs", times=1)   # the next call answers 502
"""

import base64
import hashlib
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

CLIENT_ID = "parity-client"
CLIENT_SECRET = "parity-client-secret"
OIDC_ID = "corp"


@dataclass
class Person:
    login: str
    uid: int = 1001
    name: str = ""
    email: str = ""
    orgs: list[str] = field(default_factory=list)  # GitHub organizations
    teams: list[str] = field(default_factory=list)  # GitHub teams, "org/slug"
    groups: list[str] = field(default_factory=list)  # GitLab group paths, the OIDC claim


@dataclass
class Grant:
    person: Person
    redirect_uri: str
    challenge: str
    nonce: str


class FakeProviders:
    page_size = 2  # GitHub's lists, per page: small, so a test crosses a page

    def __init__(self) -> None:
        self.person = Person(login="nobody")
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.codes: dict[str, Grant] = {}
        self.tokens: dict[str, Person] = {}
        self.failures: dict[str, int] = {}
        self.calls: list[str] = []
        self.scopes: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> "FakeProviders":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def env(self) -> dict[str, str]:
        prefix = f"PARITY_SIGN_IN_OIDC_{OIDC_ID.upper()}"
        return {
            "PARITY_SIGN_IN_GITHUB_CLIENT_ID": CLIENT_ID,
            "PARITY_SIGN_IN_GITHUB_SECRET": CLIENT_SECRET,
            "PARITY_SIGN_IN_GITHUB_URL": f"{self.url}/github",
            "PARITY_SIGN_IN_GITLAB_CLIENT_ID": CLIENT_ID,
            "PARITY_SIGN_IN_GITLAB_SECRET": CLIENT_SECRET,
            "PARITY_SIGN_IN_GITLAB_URL": f"{self.url}/gitlab",
            "PARITY_SIGN_IN_OIDC": OIDC_ID,
            f"{prefix}_URL": f"{self.url}/oidc",
            f"{prefix}_CLIENT_ID": CLIENT_ID,
            f"{prefix}_SECRET": CLIENT_SECRET,
            f"{prefix}_LABEL": "Corp SSO",
        }

    def fail(self, path: str, *, times: int) -> None:
        """The next ``times`` requests to ``path`` answer 502."""
        self.failures[path] = times

    # --- what the endpoints answer ---

    def authorize(self, query: dict[str, str]) -> str:
        """The redirect back to parity with a code (or an error), as the provider sends it."""
        if query.get("client_id") != CLIENT_ID:
            return f"{query['redirect_uri']}?{urlencode({'error': 'invalid_client'})}"
        self.scopes.append(query.get("scope", ""))
        code = secrets.token_urlsafe(16)
        self.codes[code] = Grant(
            self.person,
            query["redirect_uri"],
            query.get("code_challenge", ""),
            query.get("nonce", ""),
        )
        back = {"code": code, **({"state": query["state"]} if "state" in query else {})}
        return f"{query['redirect_uri']}?{urlencode(back)}"

    def token(self, form: dict[str, str], basic: tuple[str, str] | None, issuer: str = "") -> dict:
        client = basic or (form.get("client_id"), form.get("client_secret"))
        grant = self.codes.pop(form.get("code", ""), None)
        if client != (CLIENT_ID, CLIENT_SECRET) or grant is None:
            return {"error": "invalid_grant"}
        if form.get("redirect_uri") != grant.redirect_uri:
            return {"error": "invalid_grant", "error_description": "redirect_uri"}
        if grant.challenge:
            verifier = form.get("code_verifier", "").encode()
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=")
            if digest.decode() != grant.challenge:
                return {"error": "invalid_grant", "error_description": "code_verifier"}
        access = secrets.token_urlsafe(24)
        self.tokens[access] = grant.person
        answer = {"access_token": access, "token_type": "bearer", "scope": "read"}
        if issuer:
            answer["id_token"] = self.id_token(grant, issuer)
        return answer

    def id_token(self, grant: Grant, issuer: str) -> str:
        now = int(time.time())
        person = grant.person
        claims = {
            "iss": issuer,
            "aud": CLIENT_ID,
            "sub": str(person.uid),
            "iat": now,
            "exp": now + 300,
            "preferred_username": person.login,
            "groups": person.groups,  # in the ID token only: userinfo leaves them out
            **({"nonce": grant.nonce} if grant.nonce else {}),
        }
        return jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": "fake-1"})

    def jwks(self) -> dict:
        key = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**key, "kid": "fake-1", "alg": "RS256", "use": "sig"}]}

    def github_list(self, kind: str, person: Person, page: int) -> tuple[list, bool]:
        if kind == "orgs":
            items = [{"login": org, "id": n} for n, org in enumerate(person.orgs)]
        else:
            items = [
                {"slug": team.split("/")[1], "organization": {"login": team.split("/")[0]}}
                for team in person.teams
            ]
        start = (page - 1) * self.page_size
        return items[start : start + self.page_size], start + self.page_size < len(items)


def _handler(fake: FakeProviders):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            self._answer("GET")

        def do_POST(self) -> None:
            self._answer("POST")

        def _answer(self, method: str) -> None:
            parts = urlsplit(self.path)
            fake.calls.append(f"{method} {parts.path}")
            left = fake.failures.get(parts.path, 0)
            if left:
                fake.failures[parts.path] = left - 1
                return self._json(502, {"message": "Bad Gateway"})
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            if method == "POST":
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode()
                query.update({k: v[0] for k, v in parse_qs(body).items()})
            route = ROUTES.get((method, parts.path))
            if route is None:
                return self._json(404, {"message": "Not Found"})
            route(self, query)

        # --- shared ---

        def _person(self, query: dict) -> Person | None:
            header = self.headers.get("Authorization", "")
            token = header.split(" ", 1)[1] if " " in header else query.get("access_token", "")
            return fake.tokens.get(token)

        def _basic(self) -> tuple[str, str] | None:
            header = self.headers.get("Authorization", "")
            if not header.startswith("Basic "):
                return None
            user, _, password = base64.b64decode(header[6:]).decode().partition(":")
            return user, password

        def authorize(self, query: dict) -> None:
            self.send_response(302)
            self.send_header("Location", fake.authorize(query))
            self.end_headers()

        def token(self, query: dict) -> None:
            answer = fake.token(query, self._basic())
            self._json(400 if "error" in answer else 200, answer)

        # --- GitHub ---

        def github_user(self, query: dict) -> None:
            person = self._person(query)
            if person is None:
                return self._json(401, {"message": "Bad credentials"})
            profile = {"id": person.uid, "login": person.login, "name": person.name}
            self._json(200, {**profile, "email": person.email, "html_url": "https://x"})

        def github_emails(self, query: dict) -> None:
            person = self._person(query)
            if person is None:
                return self._json(401, {"message": "Bad credentials"})
            emails = [{"email": person.email, "primary": True, "verified": True}]
            self._json(200, emails if person.email else [])

        def github_orgs(self, query: dict) -> None:
            self._github_list("orgs", query)

        def github_teams(self, query: dict) -> None:
            self._github_list("teams", query)

        def _github_list(self, kind: str, query: dict) -> None:
            person = self._person(query)
            if person is None:
                return self._json(401, {"message": "Bad credentials"})
            page = int(query.get("page", "1"))
            items, more = fake.github_list(kind, person, page)
            link = f"{fake.url}/github/api/v3/user/{kind}?per_page=100&page={page + 1}"
            self._json(200, items, {"Link": f'<{link}>; rel="next"'} if more else {})

        # --- GitLab ---

        def gitlab_user(self, query: dict) -> None:
            person = self._person(query)
            if person is None:
                return self._json(401, {"message": "401 Unauthorized"})
            self._json(200, {"id": person.uid, "username": person.login, "email": person.email})

        def gitlab_userinfo(self, query: dict) -> None:
            person = self._person(query)
            if person is None:
                return self._json(401, {"error": "invalid_token"})
            self._json(200, {"sub": str(person.uid), "groups": person.groups})

        # --- OpenID Connect ---

        def oidc_configuration(self, query: dict) -> None:
            base = f"{fake.url}/oidc"
            self._json(
                200,
                {
                    "issuer": base,
                    "authorization_endpoint": f"{base}/authorize",
                    "token_endpoint": f"{base}/token",
                    "userinfo_endpoint": f"{base}/userinfo",
                    "jwks_uri": f"{base}/jwks",
                    "token_endpoint_auth_methods_supported": ["client_secret_post"],
                },
            )

        def oidc_token(self, query: dict) -> None:
            answer = fake.token(query, self._basic(), issuer=f"{fake.url}/oidc")
            self._json(400 if "error" in answer else 200, answer)

        def oidc_userinfo(self, query: dict) -> None:
            person = self._person(query)
            if person is None:
                return self._json(401, {"error": "invalid_token"})
            profile = {"sub": str(person.uid), "preferred_username": person.login}
            self._json(200, {**profile, "email": person.email, "name": person.name})

        def oidc_jwks(self, query: dict) -> None:
            self._json(200, fake.jwks())

        def _json(self, status: int, body, headers: dict | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    ROUTES = {
        ("GET", "/github/login/oauth/authorize"): Handler.authorize,
        ("POST", "/github/login/oauth/access_token"): Handler.token,
        ("GET", "/github/api/v3/user"): Handler.github_user,
        ("GET", "/github/api/v3/user/emails"): Handler.github_emails,
        ("GET", "/github/api/v3/user/orgs"): Handler.github_orgs,
        ("GET", "/github/api/v3/user/teams"): Handler.github_teams,
        ("GET", "/gitlab/oauth/authorize"): Handler.authorize,
        ("POST", "/gitlab/oauth/token"): Handler.token,
        ("GET", "/gitlab/api/v4/user"): Handler.gitlab_user,
        ("GET", "/gitlab/oauth/userinfo"): Handler.gitlab_userinfo,
        ("GET", "/oidc/.well-known/openid-configuration"): Handler.oidc_configuration,
        ("GET", "/oidc/authorize"): Handler.authorize,
        ("POST", "/oidc/token"): Handler.oidc_token,
        ("GET", "/oidc/userinfo"): Handler.oidc_userinfo,
        ("GET", "/oidc/jwks"): Handler.oidc_jwks,
    }
    return Handler
