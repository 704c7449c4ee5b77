import os

from celery import Celery, signals
from django.db import DatabaseError

# Production unless told: a server started bare must not run in DEBUG with a known secret;
# a laptop sets DJANGO_SETTINGS_MODULE=parity.settings.local (the Makefile does).
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parity.settings.production")

app = Celery("parity")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@signals.worker_init.connect
@signals.beat_init.connect
def _embedded_database_start(**kwargs) -> None:
    # A laptop's worker or beat without DATABASE_URL shares the embedded Postgres.
    from parity.embedded_db import embedded_database_ensure

    embedded_database_ensure()


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
