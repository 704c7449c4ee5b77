"""Production: the default of parity.wsgi, parity.celery, manage.py runserver (and of other
commands when SECRET_KEY is set), so a server started without DJANGO_SETTINGS_MODULE is never in
DEBUG with a known secret. No default secret, DEBUG off, HTTPS only (HSTS, redirects, secure
cookies). `manage.py check --deploy` passes clean."""

import os

from django.core.exceptions import ImproperlyConfigured

# Checked before base is imported, so the message is the first thing a bare start reports.
if not os.environ.get("SECRET_KEY"):
    raise ImproperlyConfigured(
        "SECRET_KEY is not set, and parity.settings.production (the default settings of "
        "parity.wsgi, parity.celery and manage.py runserver) has no default secret. In "
        "production set SECRET_KEY to a long random value, e.g. "
        "SECRET_KEY=$(python -c 'import secrets; print(secrets.token_urlsafe(50))'). "
        "On a laptop use the local settings: DJANGO_SETTINGS_MODULE=parity.settings.local "
        "(make demo, make serve, make worker and make beat set it)."
    )

from parity.settings.base import *  # noqa: E402,F403
from parity.settings.base import env_bool, env_int, env_list  # noqa: E402

SECRET_KEY = os.environ["SECRET_KEY"]
# PARITY_SECRETS_KEYS unset: webhook secrets are encrypted with a key derived from SECRET_KEY,
# so changing SECRET_KEY alone leaves them unreadable (deliveries fail, saying so). Before
# changing it, list the old derived key (`manage.py secrets_keys derived`; docs/operations.md).
DEBUG = False
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
# A TLS-terminating proxy in front says the original scheme in this header.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Plain-HTTP requests are redirected to HTTPS, except paths matching SECURE_REDIRECT_EXEMPT
# (regexes without the leading slash). The probes need none: parity.health.middleware answers
# /healthz, /readyz and /metrics before the redirect.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
SECURE_REDIRECT_EXEMPT = env_list("SECURE_REDIRECT_EXEMPT", "")
# Browsers remember to use HTTPS only. Preload (a commitment for the domain and every
# subdomain, slow to undo) is off unless SECURE_HSTS_PRELOAD=true.
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 365 * 24 * 60 * 60)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
# security.W021 only says preload is off, which is the documented choice above.
SILENCED_SYSTEM_CHECKS = ["security.W021"]
