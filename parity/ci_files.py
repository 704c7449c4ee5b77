"""``/ci/<file>``: the CI client and the runner integrations (``parity/clients/``), served by the
server CI already talks to, so a workflow fetches the version that matches its server:
``curl -fsSO "$PARITY_URL/ci/parity_ci.py"``. Public: they hold no data."""

import hashlib
from functools import cache
from pathlib import Path

from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import condition, require_safe

CLIENTS_DIR = Path(__file__).resolve().parent / "clients"


@cache
def _client_files() -> dict[str, bytes]:
    """The servable files, read once per process: only top-level ``.py`` files of the folder."""
    return {
        path.name: path.read_bytes()
        for path in sorted(CLIENTS_DIR.glob("*.py"))
        if not path.name.startswith("_")
    }


def _etag(request: HttpRequest, name: str) -> str | None:
    content = _client_files().get(name)
    return hashlib.sha256(content).hexdigest()[:32] if content is not None else None


@require_safe
@condition(etag_func=_etag)
def ci_file(request: HttpRequest, name: str) -> HttpResponse:
    content = _client_files().get(name)
    if content is None:
        known = ", ".join(_client_files()) or "none"
        raise Http404(f"No CI file '{name}'. Files: {known}.")
    response = HttpResponse(content, content_type="text/x-python; charset=utf-8")
    response["Content-Disposition"] = f'inline; filename="{name}"'
    return response
