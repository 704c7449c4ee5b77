"""The test suite: a real Postgres (DATABASE_URL or the embedded one), fast hashing."""

from pathlib import Path

from parity.settings.base import *  # noqa: F403
from parity.settings.base import RAW_STORAGE, VAR_DIR, env_str

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
MEDIA_ROOT = Path(env_str("PARITY_MEDIA_ROOT", str(VAR_DIR / "test-media")))
STORAGES = {
    "default": RAW_STORAGE,  # the live stack's processes may be given a bucket (tests/e2e)
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
LOGGING["root"]["level"] = "WARNING"  # noqa: F405
# The suite's fakes (receivers, trackers, issuers) listen on loopback, which production refuses:
# the tests allow it by name, and only it (docs/security.md). No test sends beyond 127.0.0.0/8.
PARITY_OUTBOUND_ALLOW = env_str("PARITY_OUTBOUND_ALLOW", "external,127.0.0.1,::1,localhost")
# The end-to-end stack (tests/e2e) gives its web and worker processes one private queue, so
# tasks of a concurrent test run never reach its worker: every task goes there, unrouted.
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_TASK_DEFAULT_QUEUE", "celery")
CELERY_TASK_QUEUES = None
CELERY_TASK_ROUTES = None
# A live stack may give deliveries a queue of their own, with a worker of its own, as
# production does (tests/e2e/test_webhook_isolation.py): the stack names that queue.
if env_str("PARITY_QUEUE_WEBHOOKS", ""):
    CELERY_TASK_ROUTES = {
        name: {"queue": PARITY_QUEUE_WEBHOOKS}  # noqa: F405
        for name in WEBHOOK_DELIVERY_TASKS  # noqa: F405
    }
# The read replica is a test mirror of the test database (Django creates nothing for it), so
# unit tests route reads to it against the same data; the live stack may name a real one.
DATABASES.setdefault("replica", dict(DATABASES["default"]))  # noqa: F405
DATABASES["replica"]["TEST"] = {"MIRROR": "default"}  # noqa: F405
# allauth's tables must exist in the one test database the session makes, for the stacks that
# sign in through providers (tests/e2e/test_sign_in.py): the tests install it whatever the
# environment configures. Without a provider it has no URLs, and the login page no buttons.
if SIGN_IN_APPS[0] not in INSTALLED_APPS:  # noqa: F405
    INSTALLED_APPS = [*INSTALLED_APPS, *SIGN_IN_APPS]  # noqa: F405
    MIDDLEWARE = list(MIDDLEWARE)  # noqa: F405
    MIDDLEWARE.insert(
        MIDDLEWARE.index("parity.ratelimit.LoginThrottleMiddleware"),
        SIGN_IN_MIDDLEWARE,  # noqa: F405
    )
