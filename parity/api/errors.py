"""Django's 404 page, in JSON under /api/: a path no URL pattern matches (an id that is not a
number, a slug with a dot, a typo) answers like the API's own 404s, ``{"detail": ...}``, as the
schema says. Everywhere else it is the HTML page."""

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.defaults import page_not_found


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": f"No API endpoint at {request.path}."}, status=404)
    return page_not_found(request, exception)
