"""The Celery app's configuration: every beat entry names a task the worker has."""

import os
import subprocess
import sys

import pytest
from django.conf import settings

from parity.celery import app


@pytest.mark.parametrize("entry", sorted(settings.CELERY_BEAT_SCHEDULE))
def test_every_beat_entry_names_a_registered_task(entry):
    # A task that moved module changes its name; beat would then send a message no worker
    # knows, and the worker drops it with only a log line.
    app.loader.import_default_modules()  # what a worker imports at start: tasks, CELERY_IMPORTS

    assert settings.CELERY_BEAT_SCHEDULE[entry]["task"] in app.tasks


ROUTES_PROBE = """
import django; django.setup()
from parity.celery import app
app.loader.import_default_modules()
print(sorted(app.amqp.queues))
for name in sorted(n for n in app.tasks if n.startswith(("ingest.", "parity."))):
    print(name, app.amqp.router.route({}, name)["queue"].name)
"""


def test_each_kind_of_work_has_its_queue_and_a_plain_worker_takes_all():
    # The deployed settings (the test settings send everything to one queue).
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "parity.settings.local",
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/postgres",
    }
    lines = subprocess.run(
        [sys.executable, "-c", ROUTES_PROBE], env=env, capture_output=True, text=True, check=True
    ).stdout.splitlines()

    # what `celery worker` without -Q consumes
    assert lines[0] == "['digest', 'ingest', 'parity', 'recovery', 'webhooks']"
    routes = dict(line.split() for line in lines[1:])
    assert routes["ingest.tasks.upload_ingest"] == "ingest"
    # Never behind an ingest backlog: the recovery tick is what unblocks uploads.
    assert routes["ingest.tasks.uploads_recover"] == "recovery"
    assert routes["parity.tasks.run_completed"] == "parity"
    assert routes["parity.digest.tasks.digest_weekly"] == "digest"
    # Never behind a slow receiver's delivery: webhooks wait on their own queue.
    assert routes["parity.tasks.webhook_deliver"] == "webhooks"
    assert set(routes.values()) == {"ingest", "parity", "digest", "recovery", "webhooks"}


def test_compose_workers_consume_every_queue():
    """A queue no deployed worker consumes fills up unseen (the recovery tick's, above all)."""
    import yaml

    compose = yaml.safe_load((settings.BASE_DIR / "docker" / "compose.yml").read_text())
    consumed = set()
    for service in compose["services"].values():
        command = service.get("command") or []
        if "worker" in command and "-Q" in command:
            consumed |= set(command[command.index("-Q") + 1].split(","))
    assert consumed == {"ingest", "parity", "digest", "recovery", "webhooks"}


def test_redis_urls_use_parity_s_transport():
    """parity.broker's fix (a Redis restart while a task runs no longer ends the worker) is
    the transport every redis:// broker URL resolves to."""
    from kombu import Connection

    from parity.broker import Transport

    assert type(Connection("redis://127.0.0.1:6379/0").transport) is Transport
    assert type(Connection("rediss://127.0.0.1:6380/0").transport) is Transport


def test_compose_runs_every_app_service_under_an_init_and_restarts_it():
    """tini forwards the stop signal and reaps children; `restart` brings a dead process back
    (docs/resilience.md, "Supervisors")."""
    import yaml

    compose = yaml.safe_load((settings.BASE_DIR / "docker" / "compose.yml").read_text())
    for name in ("migrate", "web", "worker-ingest", "worker", "beat"):
        assert compose["services"][name].get("init") is True, name
    for name in ("web", "worker-ingest", "worker", "beat"):
        assert compose["services"][name]["restart"] == "unless-stopped", name
