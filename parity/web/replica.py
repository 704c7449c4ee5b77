"""Page reads from the read replica (docs/operations.md, "A read replica"); installed only when
``PARITY_DB_REPLICA_URL`` names one.

A GET or HEAD of a view of the dashboard or the read API reads the replica, unless the view is
marked ``reads_primary`` (the triage views, whose next page must show the triage; the verdict,
which CI asks for right after it saw its uploads done on the primary) or the replica is unfit:
unreachable, no longer a streaming standby, behind by more than
``PARITY_DB_REPLICA_MAX_LAG_SECONDS``, or not yet past the reader's own last write.

Read your own writes: any other request (a POST) leaves the primary's WAL position in a cookie;
the reader's pages then read the primary until the replica has replayed past it, and the cookie
is dropped. A page the replica fails (it went away mid-request, cancelled a query on a replay
conflict) is answered again from the primary: a GET is safe to repeat, and never a 500 for it.

It is the last middleware, so its ``process_exception`` sees a database error before
``DatabaseUnavailableMiddleware`` turns it into a 503.
"""

import logging

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError
from django.http import HttpRequest, HttpResponse

from parity.read_replica import (
    LSN,
    REPLICA,
    primary_position,
    reads_from,
    reads_switch,
    replica_failed,
    replica_refusal,
)

logger = logging.getLogger(__name__)

# The views whose reads the replica answers: the dashboard's pages and the read API.
PAGE_PACKAGES = ("parity.dashboard.", "parity.api.")
SAFE_METHODS = frozenset({"GET", "HEAD"})
WROTE_COOKIE = "parity_wrote"


def reads_primary(view):
    """Mark a view (a function or a class) as reading the primary on every method."""
    view.reads_primary = True
    return view


def page_read(view) -> bool:
    """Whether ``view`` (as URL resolution returns it) is a page or read-API view that may read
    the replica."""
    owner = getattr(view, "view_class", view)
    if getattr(owner, "reads_primary", False) or getattr(view, "reads_primary", False):
        return False
    return owner.__module__.startswith(PAGE_PACKAGES)


def wrote_position(request: HttpRequest) -> str | None:
    """The WAL position the reader's last write left in its cookie; a malformed one is
    ignored (it only ever sent the reader to the primary)."""
    value = request.COOKIES.get(WROTE_COOKIE, "")
    return value if LSN.fullmatch(value) else None


class ReplicaReadsMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.parity_reads = None  # decided in process_view, once the view is known
        response = self._answer(request)
        failure = getattr(request, "parity_replica_failure", None)
        if failure is not None:
            logger.warning(
                "%s %s failed on the read replica (%s); answered from the primary",
                request.method,
                request.path,
                str(failure).strip(),
            )
            request.parity_reads = DEFAULT_DB_ALIAS  # decided: process_view keeps it
            response = self._answer(request)
        if request.method not in SAFE_METHODS:
            self._remember_write(request, response)
        elif request.parity_reads == REPLICA and WROTE_COOKIE in request.COOKIES:
            response.delete_cookie(WROTE_COOKIE)  # the replica is past it
        return response

    def _answer(self, request: HttpRequest) -> HttpResponse:
        # process_view may point the reads at the replica; they come back when the block ends.
        with reads_from(DEFAULT_DB_ALIAS):
            return self.get_response(request)

    def process_view(self, request: HttpRequest, view, args, kwargs) -> None:
        if request.parity_reads is not None:
            return None  # the second answer of a page the replica failed
        request.parity_reads = DEFAULT_DB_ALIAS
        if request.method not in SAFE_METHODS or not page_read(view):
            return None
        refusal = replica_refusal(wrote=wrote_position(request))
        if refusal is not None:
            logger.debug("%s reads the primary: %s", request.path, refusal)
            return None
        request.parity_reads = REPLICA
        reads_switch(REPLICA)
        return None

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if getattr(request, "parity_reads", None) != REPLICA or not isinstance(exc, DatabaseError):
            return None
        replica_failed(exc)
        request.parity_replica_failure = exc
        return HttpResponse(status=503)  # a placeholder: __call__ answers again

    @staticmethod
    def _remember_write(request: HttpRequest, response: HttpResponse) -> None:
        # A client authenticating by header (CI's upload token) keeps no cookies.
        if "HTTP_AUTHORIZATION" in request.META:
            return
        try:
            position = primary_position()
        except DatabaseError:
            return  # the primary is unreachable: nothing was written either
        response.set_cookie(
            WROTE_COOKIE,
            position,
            # Past this the lag limit stands in for it: a replica this far behind is not read.
            max_age=settings.PARITY_DB_REPLICA_MAX_LAG_SECONDS,
            secure=settings.SESSION_COOKIE_SECURE,
            httponly=True,
            samesite="Lax",
        )
