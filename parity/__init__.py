from parity.celery import app as celery_app

# The server's version (PEP 440): the wheel of the CI files carries it
# (/ci/parity_ci-<version>-py3-none-any.whl, parity.ci_files). parity/clients/parity_ci.py
# imports nothing of parity, so it says it again; a test holds the two equal.
__version__ = "0.1.0"

__all__ = ["__version__", "celery_app"]
