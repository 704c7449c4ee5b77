"""The Content-Security-Policy every page answers with (docs/dashboard.md, "Content security").

Scripts and style sheets come from parity's own static files only: no inline ``<script>``, no
``onclick=``, no ``style=""`` in a template, no ``eval``. A link a stored URL made can then run
nothing even if one slipped past the URL rule (``parity.pure.web_urls``). A view whose page
cannot keep the strict policy says so with ``csp_policy`` and why; the policy is sent on every
response (a JSON answer or a file ignores it) unless the view set its own.
"""

from collections.abc import Callable
from functools import wraps
from urllib.parse import urlsplit

from django.http import HttpRequest, HttpResponse

HEADER = "Content-Security-Policy"

STRICT = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "font-src": "'self'",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'none'",
    "frame-ancestors": "'none'",
    "form-action": "'self'",
}


def policy(**changes: str | None) -> str:
    """The strict policy with ``changes`` (``style_src="..."``; ``None`` drops a directive)."""
    directives = dict(STRICT)
    for name, value in changes.items():
        directives[name.replace("_", "-")] = value
    return "; ".join(f"{name} {value}" for name, value in directives.items() if value)


STRICT_POLICY = policy()
# Sign-in forms POST to allauth, which redirects the browser to the identity provider; browsers
# apply form-action to that redirect, so under /accounts/ a form may lead elsewhere.
SIGN_IN_POLICY = policy(form_action=None)
_BY_PREFIX = (("/accounts/", SIGN_IN_POLICY),)


def policy_posting_to(url: str) -> str:
    """The strict policy, with forms also allowed to lead to ``url``'s origin (an http(s) URL):
    a page whose form the server answers with a redirect there, which browsers check against
    form-action (the file-issue page's "open the tracker's new-issue page")."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return STRICT_POLICY
    return policy(form_action=f"'self' {parts.scheme}://{parts.netloc}")


def csp_policy(value: str) -> Callable:
    """Give a view's responses ``value`` instead of the strict policy (say why beside it)."""

    def decorate(view: Callable) -> Callable:
        @wraps(view)
        def wrapped(*args, **kwargs) -> HttpResponse:
            response = view(*args, **kwargs)
            response.headers[HEADER] = value
            return response

        return wrapped

    return decorate


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if HEADER not in response.headers:
            response.headers[HEADER] = next(
                (value for prefix, value in _BY_PREFIX if request.path.startswith(prefix)),
                STRICT_POLICY,
            )
        return response
