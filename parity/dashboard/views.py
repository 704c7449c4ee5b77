from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from parity.selectors import projects_overview


def overview(request: HttpRequest) -> HttpResponse:
    return render(request, "parity/overview.html", {"projects": projects_overview()})
