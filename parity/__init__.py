import re
from pathlib import Path

from parity.celery import app as celery_app


def _client_version() -> str:
    """The one version literal, the CI client's (``parity/clients/parity_ci.py``): that file
    imports nothing of parity, is packaged on its own as ``parity-dashboard-ci`` (its pyproject.toml
    reads the same literal) and is served as a wheel at this version; so the server reads it
    rather than saying it a second time. Read, not imported: the client is no module of this
    package's."""
    source = (Path(__file__).resolve().parent / "clients" / "parity_ci.py").read_text("utf-8")
    found = re.search(r'^__version__ = "([^"]+)"$', source, re.M)
    if found is None:
        raise RuntimeError('parity/clients/parity_ci.py defines no __version__ = "..."')
    return found.group(1)


# The server's version (PEP 440), the client's: the wheel of the CI files carries it
# (/ci/parity_dashboard_ci-<version>-py3-none-any.whl, parity.ci_files), as does the package's
# build (parity/clients/pyproject.toml).
__version__ = _client_version()

__all__ = ["__version__", "celery_app"]
