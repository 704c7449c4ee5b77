"""The one rule for a URL parity stores and shows as a link (an issue's, a CI run's, a project's
issue URL template): ``http`` or ``https`` with a host, and nothing else.

A stored URL becomes an ``href`` on the dashboard and a line in the lists CI reads, so a
``javascript:``, ``data:`` or ``vbscript:`` URL (in any case, behind any whitespace or control
character a browser strips) would run a script in the reader's session. Browsers drop leading
and trailing C0 controls and spaces and remove tabs and newlines anywhere before reading the
scheme (the WHATWG URL parser), so the rule refuses a URL that carries any of them at all
rather than guessing what a browser will make of it.

Pure: no Django. ``parity.models.fields.validate_web_url`` is its model-layer validator.
"""

import re
import unicodedata
from urllib.parse import urlsplit

WEB_SCHEMES = ("http", "https")
# Controls, DEL and any space (a browser strips or skips some; the database's check refuses
# any), and invisible format characters (a right-to-left override hides what a URL says).
_CONTROL_OR_SPACE = re.compile(r"[\x00-\x20\x7f-\x9f\s]")
PROBLEM = "issue URL must be http(s)"  # how an import's report names the refusal


def web_url_problem(url: str) -> str:
    """Why ``url`` is not an http(s) URL with a host, in words; "" when it is one."""
    if _CONTROL_OR_SPACE.search(url) or any(unicodedata.category(c) == "Cf" for c in url):
        return "a URL cannot hold spaces or control characters"
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return "it is not a URL"
    if parts.scheme.lower() not in WEB_SCHEMES:
        return "only http:// and https:// URLs are links"
    if not host:
        return "an http(s) URL needs a host"
    return ""


def is_web_url(url: str) -> bool:
    return bool(url) and not web_url_problem(url)


def web_url_or_empty(url: str) -> str:
    """``url`` when it may be a link, else "": what a page puts in an ``href``."""
    return url if is_web_url(url) else ""
