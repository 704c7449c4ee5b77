"""Development on a laptop: DEBUG on unless told otherwise; database connections closed after
each request, since runserver (make serve, make demo) starts a thread per request; mail printed
unless an SMTP server is named; absolute links to the address `make demo` or `make serve` last
served."""

import os

from parity.settings.base import *  # noqa: F403
from parity.settings.base import VAR_DIR, databases, env_bool, env_int

DEBUG = env_bool("DEBUG", True)
# A connection kept past its runserver thread would linger until garbage collection (base.py).
PARITY_DB_CONN_MAX_AGE = env_int("PARITY_DB_CONN_MAX_AGE", 0)
DATABASES = databases(PARITY_DB_CONN_MAX_AGE)

# Nothing listens on localhost:25 on a laptop, so a send (send_digest) would fail: mail goes to
# the console unless EMAIL_HOST or EMAIL_BACKEND says where (send_digest says which it was).
if not (os.environ.get("EMAIL_HOST") or os.environ.get("EMAIL_BACKEND")):
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"

# The Makefile's demo and serve targets record the address they serve here, so a command run
# beside the server (send_digest, subscribe, load_demo) links to it, not to base's default port.
SERVED_URL_FILE = VAR_DIR / "site_url"
if "SITE_URL" not in os.environ and SERVED_URL_FILE.is_file():
    SITE_URL = SERVED_URL_FILE.read_text(encoding="utf-8").strip().rstrip("/")
