"""``/ci/<file>``: the CI client and the runner integrations (``parity/clients/``), served by the
server CI already talks to, so a workflow fetches the version that matches its server:
``curl -fsSO "$PARITY_URL/ci/parity_ci.py"``. The same files also go as one wheel,
``/ci/parity_dashboard_ci-<version>-py3-none-any.whl`` (``parity.ci_wheel``; the version is the
server's), listed on ``/ci/`` for ``pip install --no-index --find-links "$PARITY_URL/ci/"
parity-dashboard-ci``. Public: they hold no data."""

import hashlib
from functools import cache
from pathlib import Path
from typing import NamedTuple

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.views.decorators.http import condition, require_safe

from parity import __version__
from parity.ci_wheel import wheel_build, wheel_filename

CLIENTS_DIR = Path(__file__).resolve().parent / "clients"
# pip takes a wheel's version from its URL's last segment, so it refuses this name before it
# asks for it ("Invalid wheel filename"); it redirects to the wheel's full name, for curl -L.
WHEEL_ALIAS = "parity_ci.whl"


class CIFile(NamedTuple):
    content: bytes
    content_type: str
    disposition: str  # inline: shown in a browser; attachment: saved


@cache
def _client_files() -> dict[str, bytes]:
    """The servable modules, read once per process: only top-level ``.py`` files of the folder."""
    return {
        path.name: path.read_bytes()
        for path in sorted(CLIENTS_DIR.glob("*.py"))
        if not path.name.startswith("_")
    }


@cache
def _served() -> dict[str, CIFile]:
    """Each module as it is, and the wheel of them all, built once per process."""
    modules = _client_files()
    served = {
        name: CIFile(content, "text/x-python; charset=utf-8", "inline")
        for name, content in modules.items()
    }
    wheel = wheel_build(modules=modules, version=__version__)
    served[wheel_filename(__version__)] = CIFile(wheel, "application/zip", "attachment")
    return served


def _etag(request: HttpRequest, name: str) -> str | None:
    served = _served().get(name)
    return hashlib.sha256(served.content).hexdigest()[:32] if served is not None else None


@require_safe
@condition(etag_func=_etag)
def ci_file(request: HttpRequest, name: str) -> HttpResponse:
    if name == WHEEL_ALIAS:
        return HttpResponseRedirect(reverse("ci-file", args=[wheel_filename(__version__)]))
    served = _served().get(name)
    if served is None:
        known = ", ".join([*_served(), WHEEL_ALIAS])
        raise Http404(f"No CI file '{name}'. Files: {known}.")
    response = HttpResponse(served.content, content_type=served.content_type)
    response["Content-Disposition"] = f'{served.disposition}; filename="{name}"'
    return response


@require_safe
def ci_index(request: HttpRequest) -> HttpResponse:
    """A link to each file: the page pip's ``--find-links`` reads for the wheel."""
    links = format_html_join(
        "\n", '<li><a href="{}">{}</a></li>', ((name, name) for name in _served())
    )
    page = format_html(
        "<!DOCTYPE html>\n<html><head><title>parity {} CI files</title></head>\n"
        "<body><h1>parity {} CI files</h1>\n<ul>\n{}\n</ul></body></html>\n",
        __version__,
        __version__,
        links,
    )
    return HttpResponse(page)
