"""Development on a laptop: DEBUG on unless told otherwise, and database connections closed
after each request, since runserver (make serve, make demo) starts a thread per request."""

from parity.settings.base import *  # noqa: F403
from parity.settings.base import databases, env_bool, env_int

DEBUG = env_bool("DEBUG", True)
# A connection kept past its runserver thread would linger until garbage collection (base.py).
PARITY_DB_CONN_MAX_AGE = env_int("PARITY_DB_CONN_MAX_AGE", 0)
DATABASES = databases(PARITY_DB_CONN_MAX_AGE)
