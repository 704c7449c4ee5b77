"""A request that cannot reach Postgres, or the raw files' storage, answers 503 with
``Retry-After``, never 500.

Postgres refuses a connection when all of its ``max_connections`` are taken ("sorry, too many
clients already"), while it starts or stops, or when it is down. None of that is the request's
fault and all of it passes: the CI client (``parity_ci``) waits ``Retry-After`` and sends the
upload again. So does a bucket out of reach (``parity.raw_storage.StorageUnavailable``): the
upload's rows roll back and the files it stored are deleted. One middleware holds the rule for
pages and both APIs: DRF hands exceptions it does not know (a database error is one) back to
Django, which gives them to ``process_exception``.
"""

import logging
import random

from django.db import OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse

from parity.raw_storage import StorageUnavailable

logger = logging.getLogger(__name__)

# Long enough for a burst's connections to be given back, short enough that CI barely waits;
# drawn at random, so that the requests of a burst, refused together, do not come back together
# (the CI client waits exactly Retry-After).
RETRY_AFTER_SECONDS = (3, 10)


def database_unreachable(exc: BaseException) -> bool:
    """Postgres refused or dropped the connection, as opposed to refusing a statement: libpq
    reports those without an SQLSTATE, while every error a query raises carries one (a
    deadlock's 40P01, a timeout's 57014) and stays a 500 worth a look."""
    if not isinstance(exc, OperationalError):
        return False
    return getattr(exc.__cause__, "pgcode", None) is None


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if database_unreachable(exc):
            what = (
                "The database is not accepting connections right now (too many clients, or it "
                "is restarting)."
            )
        elif isinstance(exc, StorageUnavailable):
            what = (
                "The storage of raw files (the object store) cannot be reached right now; "
                "nothing of this upload was kept."
            )
        else:
            return None
        logger.warning("%s %s answered 503: %s", request.method, request.path, exc)
        seconds = random.randint(*RETRY_AFTER_SECONDS)
        message = (
            f"{what} Send the request again in {seconds} s: an upload sent twice is stored once."
        )
        response: HttpResponse
        if request.path.startswith("/api/"):
            response = JsonResponse({"detail": message}, status=503)
        else:
            response = HttpResponse(message, status=503, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = str(seconds)
        return response
