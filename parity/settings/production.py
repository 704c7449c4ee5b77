"""Production (docker/compose.yml): no default secret, DEBUG off, secure cookies."""

import os

from parity.settings.base import *  # noqa: F403

SECRET_KEY = os.environ["SECRET_KEY"]
DEBUG = False
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
