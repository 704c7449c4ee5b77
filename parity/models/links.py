"""The model layer's half of the URL rule (``parity.pure.web_urls``): a validator for every
field whose URL a page shows as a link, and the check constraint that holds the issue table to
it whichever way a row is written (a service, the admin, ``bulk_create``, ``update``)."""

from django.core.exceptions import ValidationError
from django.db.models import Q

from parity.pure.web_urls import web_url_problem


def validate_web_url(value: str) -> None:
    """An http(s) URL with a host, or "" (no link)."""
    problem = web_url_problem(value) if value else ""
    if problem:
        raise ValidationError(f"The URL must be http(s): {problem}.", code="web_url")


# The database's spelling of the same rule, coarser (the validator says why): "" or http(s)://
# and a first character of a host, no space or control character anywhere.
WEB_URL_OR_EMPTY = Q(url="") | (
    Q(url__iregex=r"^https?://[^/?#[:space:][:cntrl:]]") & ~Q(url__regex=r"[[:space:][:cntrl:]]")
)
