"""Settings shared by every environment. Every value comes from an environment variable with a
documented default (docs/settings.md); the thin modules beside this one only change defaults."""

import os
from pathlib import Path

import dj_database_url
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured

from parity.embedded_db import embedded_database
from parity.outbound.policy import Policy as _OutboundPolicy
from parity.settings.sign_in import sign_in_providers, socialaccount_providers


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def env_map(name: str, default: str = "") -> dict[str, str]:
    """``host=value,host2=value2`` as a dict (hosts lower-cased)."""
    pairs = (item.partition("=") for item in env_list(name, default))
    return {key.strip().lower(): value.strip() for key, sep, value in pairs if sep and key.strip()}


BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(env_str("PARITY_VAR_DIR", str(BASE_DIR / "var")))

SECRET_KEY = env_str("SECRET_KEY", "insecure-local-development-key")
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")
SITE_URL = env_str("SITE_URL", "http://127.0.0.1:8000").rstrip("/")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "parity",
    "ingest",
]

MIDDLEWARE = [
    # /healthz, /readyz and /metrics, before the HTTPS redirect and the host check: a probe
    # calls the container's own address over plain HTTP (docs/health.md).
    "parity.health.middleware.ProbeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "parity.ratelimit.LoginThrottleMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Every response's Content-Security-Policy (parity.web.csp): scripts and styles only from
    # parity's static files. nosniff and Referrer-Policy are SecurityMiddleware's defaults.
    "parity.web.csp.ContentSecurityPolicyMiddleware",
    # A request that cannot get a database connection answers 503 with Retry-After, not 500.
    "parity.web.unavailable.DatabaseUnavailableMiddleware",
]

# /metrics (docs/health.md) answers only with this bearer token; unset, it is off: no path and
# no request counting. Under gunicorn set PROMETHEUS_MULTIPROC_DIR too (several processes).
PARITY_METRICS_TOKEN = env_str("PARITY_METRICS_TOKEN", "")
if PARITY_METRICS_TOKEN:
    MIDDLEWARE.insert(0, "parity.health.metrics.RequestMetricsMiddleware")

ROOT_URLCONF = "parity.urls"
WSGI_APPLICATION = "parity.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# DATABASE_URL unset: an embedded Postgres (pgserver) under PARITY_VAR_DIR, so a fresh machine
# needs no database server. Described here; it starts at the first connection (parity/embedded_db).
DATABASE_URL = os.environ.get("DATABASE_URL", "")
# How long a thread keeps its database connection (docs/operations.md, "Database connections").
# Persistent connections stay bounded only where the threads are a fixed set: gunicorn's sync
# workers and Celery's prefork children hold one each, gunicorn's gthread workers one per thread
# of a fixed pool. So production keeps them (60 s). runserver starts a thread per request, and a
# connection kept past its thread lingers until garbage collection: a burst of uploads takes
# every connection Postgres has. The local settings (make serve, make demo) therefore close it
# after each request.
PARITY_DB_CONN_MAX_AGE = env_int("PARITY_DB_CONN_MAX_AGE", 60)
# DATABASE_URL names a transaction pooler (PgBouncer's pool_mode = transaction), which may run
# each transaction on another server connection (docs/operations.md, "Behind PgBouncer"). A
# server-side cursor Django opens outside a transaction (WITH HOLD, for .iterator()) lives on
# the connection it was declared on, so its next fetch can find it gone: Django then reads
# .iterator() with plain cursors instead. Parity's own long reads page by key and need neither.
PARITY_DB_POOLED = env_bool("PARITY_DB_POOLED", False)


# A streaming replica of DATABASE_URL's server (docs/operations.md, "A read replica"): pages
# and the read API read it, everything else the primary; off unless set. A page reads the
# primary while the replica's replay is more than PARITY_DB_REPLICA_MAX_LAG_SECONDS behind, and
# for PARITY_DB_REPLICA_RETRY_SECONDS after the replica failed. A connection attempt to it times
# out soon (unless the URL sets ?connect_timeout=), so a silent replica host costs a page little.
PARITY_DB_REPLICA_URL = env_str("PARITY_DB_REPLICA_URL", "")
PARITY_DB_REPLICA_MAX_LAG_SECONDS = env_int("PARITY_DB_REPLICA_MAX_LAG_SECONDS", 30)
PARITY_DB_REPLICA_RETRY_SECONDS = env_int("PARITY_DB_REPLICA_RETRY_SECONDS", 30)


def databases(conn_max_age: int) -> dict[str, dict]:
    """Django's DATABASES for DATABASE_URL, or the embedded Postgres, with ``conn_max_age``;
    and the read replica, when PARITY_DB_REPLICA_URL names one."""
    if DATABASE_URL:
        default = dj_database_url.parse(
            DATABASE_URL, conn_max_age=conn_max_age, conn_health_checks=True
        )
        default["DISABLE_SERVER_SIDE_CURSORS"] = PARITY_DB_POOLED
    else:
        default = embedded_database(VAR_DIR / "pgdata", conn_max_age=conn_max_age)
    found = {"default": default}
    if PARITY_DB_REPLICA_URL:
        replica = dj_database_url.parse(
            PARITY_DB_REPLICA_URL, conn_max_age=conn_max_age, conn_health_checks=True
        )
        replica["DISABLE_SERVER_SIDE_CURSORS"] = PARITY_DB_POOLED
        replica["OPTIONS"].setdefault("connect_timeout", 2)
        found["replica"] = replica
    return found


DATABASES = databases(PARITY_DB_CONN_MAX_AGE)
# Inert until the replica middleware sends a page's reads to the replica (parity.read_replica).
DATABASE_ROUTERS = ["parity.read_replica.ReplicaRouter"]
if PARITY_DB_REPLICA_URL:
    # Last: its process_exception must see a replica's error before the 503 middleware does.
    MIDDLEWARE.append("parity.web.replica.ReplicaReadsMiddleware")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
# The dashboard's Plotly bundle comes from the installed plotly package, not a copy in static/.
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "parity.dashboard.staticfiles.PlotlyFinder",
]
MEDIA_ROOT = Path(env_str("PARITY_MEDIA_ROOT", str(VAR_DIR / "media")))
MEDIA_URL = "/media/"


def raw_storage(bucket: str) -> dict:
    """The default storage, where raw uploads live (parity.raw_storage): MEDIA_ROOT, or with a
    bucket (PARITY_S3_BUCKET) an S3-compatible one, so web and workers need share no disk
    (docs/operations.md, "Object storage")."""
    if not bucket:
        return {"BACKEND": "django.core.files.storage.FileSystemStorage"}
    from botocore.config import Config

    timeout = env_int("PARITY_S3_TIMEOUT_SECONDS", 5)
    return {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": bucket,
            "location": env_str("PARITY_S3_PREFIX", ""),
            "endpoint_url": env_str("PARITY_S3_ENDPOINT_URL", "") or None,
            "region_name": env_str("PARITY_S3_REGION", "") or None,
            "addressing_style": env_str("PARITY_S3_ADDRESSING_STYLE", "") or None,
            # Two uploads of the same file (in two runs) get two objects: retention deletes
            # one run's object while the other run still reads its own.
            "file_overwrite": False,
            # A download past this spills to the worker's temporary directory, not memory.
            "max_memory_size": 8 * 1024 * 1024,
            # A bucket out of reach answers within seconds, so the API's 503 comes before the
            # CI client's own timeout, and a gunicorn thread is not held for minutes.
            "client_config": Config(
                connect_timeout=timeout,
                read_timeout=timeout * 6,
                retries={"mode": "standard", "max_attempts": 3},
            ),
        },
    }


RAW_STORAGE = raw_storage(env_str("PARITY_S3_BUCKET", ""))
STORAGES = {
    "default": RAW_STORAGE,
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

# Members of a project need not be admin staff: they log in here, not at /admin/login/.
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "overview"

# Sign-in with GitHub, GitLab or OpenID Connect providers (docs/sign-in.md), each on when its
# client id is set (parity/settings/sign_in.py reads them). With none, Django's login form is the
# only one and allauth is not installed: no tables, no middleware, no URLs. Local accounts stay.
PARITY_SIGN_IN_PROVIDERS = sign_in_providers(os.environ)
SIGN_IN_APPS = [
    "allauth",
    "allauth.account",
    "allauth.socialaccount",
    "allauth.socialaccount.providers.github",
    "allauth.socialaccount.providers.gitlab",
    "allauth.socialaccount.providers.openid_connect",
]
SIGN_IN_MIDDLEWARE = "allauth.account.middleware.AccountMiddleware"
if PARITY_SIGN_IN_PROVIDERS:
    INSTALLED_APPS += SIGN_IN_APPS
    MIDDLEWARE.insert(
        MIDDLEWARE.index("parity.ratelimit.LoginThrottleMiddleware"), SIGN_IN_MIDDLEWARE
    )
SOCIALACCOUNT_PROVIDERS = socialaccount_providers(PARITY_SIGN_IN_PROVIDERS)
# allauth signs users in through providers only: its own sign-up, password and email pages stay
# off (local accounts are made in the admin and log in with Django's form). A provider's email
# never logs into an existing account, only the provider's own user id does: a local account
# with the same email is another user, and the provider's user is made anew.
SOCIALACCOUNT_ONLY = True
ACCOUNT_EMAIL_VERIFICATION = "none"
ACCOUNT_UNIQUE_EMAIL = False
SOCIALACCOUNT_EMAIL_AUTHENTICATION = False
SOCIALACCOUNT_ADAPTER = "parity.sign_in.adapter.SignInAdapter"
SOCIALACCOUNT_STORE_TOKENS = False
SOCIALACCOUNT_REQUESTS_TIMEOUT = env_int("PARITY_SIGN_IN_TIMEOUT_SECONDS", 10)

# Access (docs/access.md). A project is public (anyone reads it) or private (its members and
# superusers); new projects get PARITY_DEFAULT_VISIBILITY. Only maintainers triage.
PARITY_DEFAULT_VISIBILITY = env_str("PARITY_DEFAULT_VISIBILITY", "private")
if PARITY_DEFAULT_VISIBILITY not in {"public", "private"}:
    raise ImproperlyConfigured(
        f"PARITY_DEFAULT_VISIBILITY={PARITY_DEFAULT_VISIBILITY!r}: use 'public' or 'private'."
    )

# Rate limits count in the cache, which gunicorn's workers must share in production: CACHE_URL
# (redis://host:6379/1) selects Redis; unset, each process counts alone in local memory (fine
# for one process on a laptop).
# A Redis that is down or hung costs a request at most these timeouts: the limits then fail open
# (parity/ratelimit.py says why; docs/resilience.md).
CACHE_URL = env_str("CACHE_URL", "")
CACHE_TIMEOUT_SECONDS = float(env_str("PARITY_CACHE_TIMEOUT_SECONDS", "0.5"))
CACHES = {
    "default": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": CACHE_URL,
            "OPTIONS": {
                "socket_connect_timeout": CACHE_TIMEOUT_SECONDS,
                "socket_timeout": CACHE_TIMEOUT_SECONDS,
            },
        }
        if CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}
# Rates are "<count>/<sec|min|hour|day>". Uploads per upload token; failed token
# authentications per client IP (past the limit a token request from that IP answers 429 unless
# its token is valid and was used from that IP before); failed logins per client IP and
# username (past the limit even the right password answers 429 until the window ends).
PARITY_THROTTLE_UPLOAD = env_str("PARITY_THROTTLE_UPLOAD", "600/min")
PARITY_THROTTLE_BAD_TOKEN = env_str("PARITY_THROTTLE_BAD_TOKEN", "30/min")
PARITY_THROTTLE_LOGIN = env_str("PARITY_THROTTLE_LOGIN", "10/min")
# Failed logins per client IP over every username (one password sprayed over many accounts).
PARITY_THROTTLE_LOGIN_ADDRESS = env_str("PARITY_THROTTLE_LOGIN_ADDRESS", "50/hour")
# Reverse proxies in front of the app: the client IP is the one this many hops back in
# X-Forwarded-For. 0 (no proxy) reads REMOTE_ADDR only, so a client cannot choose its own IP.
PARITY_NUM_PROXIES = env_int("PARITY_NUM_PROXIES", 0)

# CI without a long-lived secret (docs/oidc.md): OIDC ID tokens of these issuers are exchanged
# at POST /api/v1/oidc/exchange/ for an upload token of PARITY_OIDC_TOKEN_SECONDS, when a trust
# rule of the project matches their claims (no rule, no upload: listing an issuer trusts
# nobody by itself). The token must be requested for PARITY_OIDC_AUDIENCE; a deployment of
# its own should pick its own (its URL). Issuers' keys are cached per process for
# PARITY_OIDC_JWKS_CACHE_SECONDS; a token with an unknown key id refetches them at most once
# per PARITY_OIDC_JWKS_REFETCH_SECONDS. exp and nbf get PARITY_OIDC_LEEWAY_SECONDS of leeway.
PARITY_OIDC_ISSUERS = [
    issuer.rstrip("/")
    for issuer in env_list("PARITY_OIDC_ISSUERS", "https://token.actions.githubusercontent.com")
]
for _issuer in PARITY_OIDC_ISSUERS:  # keys fetched over plain HTTP could be anyone's
    if not _issuer.startswith(("https://", "http://127.0.0.1:", "http://localhost:")):
        raise ImproperlyConfigured(f"PARITY_OIDC_ISSUERS: {_issuer!r} is not an https:// URL.")
PARITY_OIDC_AUDIENCE = env_str("PARITY_OIDC_AUDIENCE", "parity")
PARITY_OIDC_TOKEN_SECONDS = env_int("PARITY_OIDC_TOKEN_SECONDS", 60 * 60)
PARITY_OIDC_JWKS_CACHE_SECONDS = env_int("PARITY_OIDC_JWKS_CACHE_SECONDS", 60 * 60)
PARITY_OIDC_JWKS_REFETCH_SECONDS = env_int("PARITY_OIDC_JWKS_REFETCH_SECONDS", 60)
PARITY_OIDC_LEEWAY_SECONDS = env_int("PARITY_OIDC_LEEWAY_SECONDS", 60)

# Email (the weekly digest).
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "parity@localhost")
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")

# Uploads. A request body over PARITY_MAX_UPLOAD_BYTES is refused; the XML inside an upload may
# decompress to at most PARITY_MAX_XML_BYTES (gzip and zip bombs stop there).
PARITY_MAX_UPLOAD_BYTES = env_int("PARITY_MAX_UPLOAD_BYTES", 100 * 1024 * 1024)
PARITY_MAX_XML_BYTES = env_int("PARITY_MAX_XML_BYTES", 1024 * 1024 * 1024)
# Inside the XML: a message keeps its first PARITY_MAX_MESSAGE_BYTES (then "… [truncated]"); a
# test name, classname or file over PARITY_MAX_NAME_CHARS, or one tag over PARITY_MAX_TOKEN_BYTES,
# fails the upload (a cut name would merge tests; a huge tag costs a worker minutes to scan).
PARITY_MAX_MESSAGE_BYTES = env_int("PARITY_MAX_MESSAGE_BYTES", 64 * 1024)
PARITY_MAX_NAME_CHARS = env_int("PARITY_MAX_NAME_CHARS", 256 * 1024)
PARITY_MAX_TOKEN_BYTES = env_int("PARITY_MAX_TOKEN_BYTES", 16 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "ingest.api.auth.UploadTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # No throttle by default: the upload view names its own (ingest.api.throttles, per token,
    # PARITY_THROTTLE_UPLOAD); failed token logins are limited in ingest.api.auth, before any view.
    "DEFAULT_THROTTLE_CLASSES": [],
    # drf-spectacular's, with security blocks that follow the access rules.
    "DEFAULT_SCHEMA_CLASS": "parity.api.schema.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "parity API",
    "DESCRIPTION": "Upload JUnit XML per backend and read test parity across backends.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI from the installed sidecar package, not a CDN: no page asks another host.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Two kinds of "kind" (an exemption's, a version transition's list): each enum its own name.
    "ENUM_NAME_OVERRIDES": {
        "TriageKindEnum": "parity.models.parity.TriageKind",
        "TransitionKindEnum": "parity.models.transitions.TransitionKind",
    },
}

# Celery. CELERY_BROKER_URL unset: tasks run eagerly in the web process (a laptop needs no
# broker). Documented beside each value because acks_late changes failure semantics.
CELERY_TASK_ALWAYS_EAGER = not env_str("CELERY_BROKER_URL", "")
# Eager tasks never reach a broker; naming the in-memory one keeps kombu from warning about a
# missing host on every start.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "") or "memory://localhost//"
CELERY_TASK_EAGER_PROPAGATES = False
# A task is acknowledged only after it finished, so a worker killed mid-upload redelivers it;
# the task is idempotent (forward-only upload states), so a redelivery is harmless.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# Redis redelivers an unacknowledged task after this. A redelivery of a task still running is
# harmless (an upload's claim is a row lock: the copy finds it held and returns), so this only
# bounds how long a dead worker's tasks wait; the recovery beat below usually acts first.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("PARITY_TASK_VISIBILITY_SECONDS", 30 * 60)
}
# A publish (the web queueing an upload) rides out a Redis restart of a few seconds: up to 6
# tries over about 5 s, then it is logged and the upload waits for recovery (parity.celery
# task_send). kombu's default gives up after 0.6 s, shorter than a restart.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 5,
    "interval_start": 0,
    "interval_step": 0.5,
    "interval_max": 2,
}
CELERY_TASK_TIME_LIMIT = 30 * 60
CELERY_TASK_SOFT_TIME_LIMIT = 28 * 60
# One prefetched task per process: ingest tasks are long, fair dispatch matters more.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
# One queue per kind of work, so operators scale ingest workers on their own
# (`celery -A parity worker -Q ingest`); a worker started without -Q consumes all five. The
# upload recovery tick has a queue of its own: behind an ingest backlog it would wait for the
# very work it is there to unblock. Webhook and Slack deliveries have one too, for a worker of
# their own: a slow receiver then holds only that worker, never an ingest, a recompute or
# recovery (docs/operations.md).
PARITY_QUEUE_INGEST = env_str("PARITY_QUEUE_INGEST", "ingest")
PARITY_QUEUE_PARITY = env_str("PARITY_QUEUE_PARITY", "parity")
PARITY_QUEUE_DIGEST = env_str("PARITY_QUEUE_DIGEST", "digest")
PARITY_QUEUE_RECOVERY = env_str("PARITY_QUEUE_RECOVERY", "recovery")
PARITY_QUEUE_WEBHOOKS = env_str("PARITY_QUEUE_WEBHOOKS", "webhooks")
# The tasks that send deliveries (each attempt, and the sweep that queues retries).
WEBHOOK_DELIVERY_TASKS = ("parity.tasks.webhook_deliver", "parity.tasks.webhooks_retry")
CELERY_TASK_QUEUES = {
    name: {"routing_key": name}
    for name in (
        PARITY_QUEUE_INGEST,
        PARITY_QUEUE_PARITY,
        PARITY_QUEUE_DIGEST,
        PARITY_QUEUE_RECOVERY,
        PARITY_QUEUE_WEBHOOKS,
    )
}
CELERY_TASK_DEFAULT_QUEUE = PARITY_QUEUE_PARITY
# A task's own name is looked up before the patterns.
CELERY_TASK_ROUTES = {
    **{name: {"queue": PARITY_QUEUE_WEBHOOKS} for name in WEBHOOK_DELIVERY_TASKS},
    "ingest.tasks.uploads_recover": {"queue": PARITY_QUEUE_RECOVERY},
    "ingest.tasks.*": {"queue": PARITY_QUEUE_INGEST},
    "parity.digest.tasks.*": {"queue": PARITY_QUEUE_DIGEST},
    "parity.tasks.*": {"queue": PARITY_QUEUE_PARITY},
}
CELERY_TIMEZONE = "UTC"
# A worker's main process marks itself alive in the broker this often; /readyz counts a worker
# whose mark is younger than the max age (parity.telemetry.heartbeat, docs/health.md).
PARITY_WORKER_HEARTBEAT_SECONDS = env_int("PARITY_WORKER_HEARTBEAT_SECONDS", 15)
PARITY_WORKER_HEARTBEAT_MAX_AGE_SECONDS = env_int("PARITY_WORKER_HEARTBEAT_MAX_AGE_SECONDS", 60)
# Beat (docker compose's `beat` service): complete the runs CI never marked complete.
# Recovery: uploads left queued or processing (a lost worker or message, or a message the broker
# never got) are queued again, and backends whose roll-ups miss their current run are recomputed.
PARITY_RECOVERY_INTERVAL_SECONDS = env_int("PARITY_RECOVERY_INTERVAL_SECONDS", 60)
CELERY_BEAT_SCHEDULE = {
    "parity-runs-complete-quiet": {
        "task": "parity.tasks.runs_complete_quiet",
        "schedule": 5 * 60.0,
    },
    "ingest-uploads-recover": {
        "task": "ingest.tasks.uploads_recover",
        "schedule": float(PARITY_RECOVERY_INTERVAL_SECONDS),
        # A tick nobody took up before the next one is dropped: the next does the same work.
        "options": {"expires": PARITY_RECOVERY_INTERVAL_SECONDS},
    },
    "parity-rollups-verify": {
        "task": "parity.tasks.rollups_verify",
        "schedule": 5 * 60.0,
    },
    "parity-results-expire": {
        "task": "parity.tasks.results_expire",
        "schedule": 60 * 60.0,
    },
    "parity-raw-files-left": {
        "task": "parity.tasks.raw_files_left_delete",
        "schedule": 15 * 60.0,
    },
    "parity-triages-expire": {
        "task": "parity.tasks.triages_expire",
        "schedule": 15 * 60.0,
    },
}

# Egress (docs/security.md): where the server and workers may send requests (webhooks, Slack,
# trackers, check runs, OIDC keys, sign-in groups). "external" (globally routable addresses
# only), "*" (anywhere), or a comma list of those, addresses, networks (CIDR) and host names
# ("*.corp.example" for a domain's). Loopback, private, link-local (cloud metadata) and the other
# internal ranges are refused unless listed: a project maintainer types a webhook URL, and
# without this the worker would fetch from inside the network for them.
PARITY_OUTBOUND_ALLOW = env_str("PARITY_OUTBOUND_ALLOW", "external")
try:
    _OutboundPolicy.parse(PARITY_OUTBOUND_ALLOW)
except ValueError as _exc:
    raise ImproperlyConfigured(str(_exc)) from None

# Webhooks (docs/webhooks.md): endpoints are added per project in the admin; with none, nothing
# is sent. A delivery is attempted up to PARITY_WEBHOOK_MAX_ATTEMPTS times, waiting
# PARITY_WEBHOOK_RETRY_SECONDS after the first and four times longer after each next one;
# each attempt (connecting, sending and reading, in all) ends after
# PARITY_WEBHOOK_TIMEOUT_SECONDS. Exemptions expiring within PARITY_WEBHOOK_EXPIRING_DAYS are
# announced once per expiry day.
PARITY_WEBHOOK_TIMEOUT_SECONDS = env_int("PARITY_WEBHOOK_TIMEOUT_SECONDS", 10)
PARITY_WEBHOOK_MAX_ATTEMPTS = env_int("PARITY_WEBHOOK_MAX_ATTEMPTS", 5)
PARITY_WEBHOOK_RETRY_SECONDS = env_int("PARITY_WEBHOOK_RETRY_SECONDS", 30)
PARITY_WEBHOOK_EXPIRING_DAYS = env_int("PARITY_WEBHOOK_EXPIRING_DAYS", 7)
# Endpoints' secrets are stored encrypted (parity.models.fields) with these Fernet keys, newest
# first: the first encrypts, any decrypts, so a key is rotated by listing the new one before the
# old (docs/operations.md, "Secrets at rest"). Unset: one key derived from SECRET_KEY, so
# changing SECRET_KEY then needs the old derived key listed here.
PARITY_SECRETS_KEYS = env_list("PARITY_SECRETS_KEYS", "")
for _key in PARITY_SECRETS_KEYS:
    try:
        Fernet(_key)
    except ValueError:
        raise ImproperlyConfigured(
            "PARITY_SECRETS_KEYS: each key is 32 url-safe base64-encoded bytes, as "
            "`python manage.py secrets_keys new` prints."
        ) from None
# Retries past the task's own countdown, and deliveries whose message the broker lost.
CELERY_BEAT_SCHEDULE["parity-webhooks-retry"] = {
    "task": "parity.tasks.webhooks_retry",
    "schedule": 60.0,
    "options": {"expires": 60},
}

# Tracker sync (parity/services/issue_sync.py, parity/trackers/): the state, title and labels of
# every issue an open gap or an exemption cites. Per host (github.com, gitlab.example.com): a read
# token, a token that may file issues, and the API URL (defaults: api.github.com, and
# https://<host>/api/v4 or /api/v3 for GitLab or GitHub Enterprise). A host without a token is
# left alone. Each issue is read about once per PARITY_TRACKER_SYNC_SECONDS, the work spread over
# beat ticks of PARITY_TRACKER_SYNC_TICK_SECONDS; a host whose quota falls to
# PARITY_TRACKER_RATE_RESERVE requests is left until its reset.
PARITY_TRACKER_TOKENS = env_map("PARITY_TRACKER_TOKENS")
PARITY_TRACKER_WRITE_TOKENS = env_map("PARITY_TRACKER_WRITE_TOKENS")
PARITY_TRACKER_API_URLS = {
    host: url.rstrip("/") for host, url in env_map("PARITY_TRACKER_API_URLS").items()
}
PARITY_TRACKER_SYNC_SECONDS = env_int("PARITY_TRACKER_SYNC_SECONDS", 60 * 60)
PARITY_TRACKER_SYNC_TICK_SECONDS = env_int("PARITY_TRACKER_SYNC_TICK_SECONDS", 60)
PARITY_TRACKER_TIMEOUT_SECONDS = float(env_str("PARITY_TRACKER_TIMEOUT_SECONDS", "10"))
PARITY_TRACKER_RATE_RESERVE = env_int("PARITY_TRACKER_RATE_RESERVE", 100)
CELERY_BEAT_SCHEDULE["parity-issues-sync"] = {
    "task": "parity.tasks.issues_sync",
    "schedule": float(PARITY_TRACKER_SYNC_TICK_SECONDS),
    # A tick that waited in the queue past the next one is dropped, not run twice over.
    "options": {"expires": PARITY_TRACKER_SYNC_TICK_SECONDS},
}
# Compare views (docs/compare-views.md#when-a-view-is-computed): a view kept less than this long
# ago is not computed again at once after a run of its variants; one refresh is queued for when
# this much time has passed since, which reads every run completed meanwhile. Beat computes again
# a view whose queued refresh was lost, and a view kept longer ago than a day (its window moves).
PARITY_COMPARE_REFRESH_SECONDS = env_int("PARITY_COMPARE_REFRESH_SECONDS", 300)
CELERY_BEAT_SCHEDULE["parity-compare-views-sweep"] = {
    "task": "parity.tasks.compare_views_sweep",
    "schedule": 10 * 60.0,
    "options": {"expires": 10 * 60},
}
# Raw results and uploaded files of runs older than this are deleted (parity/services/retention.py);
# runs, roll-ups, and each backend's current and previous run are kept whatever their age.
PARITY_RESULTS_KEEP_DAYS = env_int("PARITY_RESULTS_KEEP_DAYS", 180)
# Passed results of runs older than this go sooner than the rest (0: kept as long as the rest).
PARITY_PASSES_KEEP_DAYS = env_int("PARITY_PASSES_KEEP_DAYS", 0)
# Results and file seconds have a partition a day (parity/storage/partitions.py); beat creates
# today's and this many days' ahead, so a missed tick never leaves an upload without one.
PARITY_PARTITIONS_AHEAD_DAYS = env_int("PARITY_PARTITIONS_AHEAD_DAYS", 2)
CELERY_BEAT_SCHEDULE["parity-partitions-create"] = {
    "task": "parity.tasks.partitions_create",
    "schedule": 60 * 60.0,
    "options": {"expires": 60 * 60},
}
# An upload pending this long with no worker holding it is queued again; one taken up this many
# times (database retries included) without finishing ends failed, with the reason.
PARITY_UPLOAD_STALE_SECONDS = env_int("PARITY_UPLOAD_STALE_SECONDS", 10 * 60)
# An upload whose message no worker took up in this long is presumed lost by the broker and
# queued again; until then it waits its turn (a backlog is never queued twice). The default is
# the visibility timeout's: Redis gives an unacknowledged message back after as long.
PARITY_UPLOAD_LOST_SECONDS = env_int("PARITY_UPLOAD_LOST_SECONDS", 30 * 60)
PARITY_UPLOAD_MAX_ATTEMPTS = env_int("PARITY_UPLOAD_MAX_ATTEMPTS", 8)

# Parity. A run CI never marks complete is complete PARITY_RUN_QUIET_MINUTES after its last
# upload finished; a backend whose current run has more than PARITY_COVERAGE_DROP_PERCENT %
# fewer tests than its previous one is flagged as a coverage drop.
PARITY_RUN_QUIET_MINUTES = env_int("PARITY_RUN_QUIET_MINUTES", 120)
PARITY_COVERAGE_DROP_PERCENT = float(env_str("PARITY_COVERAGE_DROP_PERCENT", "5"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}

# Weekly digest (parity/digest/). The beat sends each active subscription the digest of the last
# full ISO week (UTC) at PARITY_DIGEST_CRON: "minute hour day-of-month month day-of-week", UTC.
# A week with nothing opened, fixed, new or relinked sends one line, or nothing when
# PARITY_DIGEST_SKIP_QUIET; each list of gaps shows at most PARITY_DIGEST_MAX_GAPS rows.
PARITY_DIGEST_CRON = env_str("PARITY_DIGEST_CRON", "0 8 * * mon")
PARITY_DIGEST_SKIP_QUIET = env_bool("PARITY_DIGEST_SKIP_QUIET", False)
PARITY_DIGEST_MAX_GAPS = env_int("PARITY_DIGEST_MAX_GAPS", 50)
# A send holds its delivery row locked (exactly-once); a stuck SMTP server must not hold it.
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 30)
# parity.digest is a package of the parity app, not an app: the worker imports its tasks here.
CELERY_IMPORTS = ["parity.digest.tasks"]


def _digest_crontab(expression: str):
    from celery.schedules import crontab

    minute, hour, day_of_month, month_of_year, day_of_week = expression.split()
    return crontab(
        minute=minute,
        hour=hour,
        day_of_month=day_of_month,
        month_of_year=month_of_year,
        day_of_week=day_of_week,
    )


CELERY_BEAT_SCHEDULE["parity-digest-weekly"] = {
    "task": "parity.digest.tasks.digest_weekly",
    "schedule": _digest_crontab(PARITY_DIGEST_CRON),
}

# Check runs (docs/check-runs.md): parity posts each complete run's verdict as a check run on
# its commit, as a GitHub App with checks: write, in the repository of the project's GitHub
# issue URL template. Off unless both the App's id and its private key (the PEM text, or the
# path of a PEM file) are set. A post GitHub could not take (5xx, a timeout, a rate limit) is
# attempted up to PARITY_CHECK_RUN_MAX_ATTEMPTS times, PARITY_CHECK_RUN_RETRY_SECONDS after the
# first and twice as long after each next one.
PARITY_GITHUB_APP_ID = env_str("PARITY_GITHUB_APP_ID", "")
PARITY_GITHUB_APP_PRIVATE_KEY = env_str("PARITY_GITHUB_APP_PRIVATE_KEY", "")
PARITY_CHECK_RUN_MAX_ATTEMPTS = env_int("PARITY_CHECK_RUN_MAX_ATTEMPTS", 5)
PARITY_CHECK_RUN_RETRY_SECONDS = env_int("PARITY_CHECK_RUN_RETRY_SECONDS", 30)
