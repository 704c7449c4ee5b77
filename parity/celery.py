import os

from celery import Celery
from django.db import DatabaseError
from kombu.transport import TRANSPORT_ALIASES

# redis:// and rediss:// brokers use kombu's Redis transport with the fix in parity.broker (a
# Redis restart while a task runs no longer ends the worker). Set before any connection is made.
TRANSPORT_ALIASES["redis"] = TRANSPORT_ALIASES["rediss"] = "parity.broker:Transport"

# Production unless told: a server started bare must not run in DEBUG with a known secret;
# a laptop sets DJANGO_SETTINGS_MODULE=parity.settings.local (the Makefile does).
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parity.settings.production")

app = Celery("parity")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


# Task options for adapters whose work is idempotent: acknowledged after the work (a lost worker
# means redelivery) and retried with backoff on database errors only; bad input is not retried.
RETRY_ON_DATABASE_ERRORS = {
    "acks_late": True,
    "autoretry_for": (DatabaseError,),
    "retry_backoff": 5,
    "retry_backoff_max": 300,
    "retry_jitter": True,
    "max_retries": 5,
}
