"""The Celery app's configuration: every beat entry names a task the worker has."""

import pytest
from django.conf import settings

from parity.celery import app


@pytest.mark.parametrize("entry", sorted(settings.CELERY_BEAT_SCHEDULE))
def test_every_beat_entry_names_a_registered_task(entry):
    # A task that moved module changes its name; beat would then send a message no worker
    # knows, and the worker drops it with only a log line.
    app.loader.import_default_modules()  # what a worker imports at start: tasks, CELERY_IMPORTS

    assert settings.CELERY_BEAT_SCHEDULE[entry]["task"] in app.tasks
