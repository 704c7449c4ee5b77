"""Migration 0046 encrypts the webhook URLs a database already holds (a Slack incoming webhook's
URL is its credential), and its reverse decrypts them into the 500-character column again."""

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from parity.models import WebhookEndpoint

BEFORE = [("parity", "0045_web_urls")]
SLACK = "https://hooks.slack.com/services/T0000/B0000/a-credential-in-the-url"


def _migrate(targets) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor


def _stored() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT url FROM parity_webhookendpoint")
        [(url,)] = cursor.fetchall()
        return url


@pytest.mark.django_db(transaction=True)
def test_existing_urls_are_encrypted_and_decrypted_back():
    executor = _migrate(BEFORE)
    apps = executor.loader.project_state(BEFORE).apps
    project = apps.get_model("parity", "Project").objects.create(slug="old", name="old")
    apps.get_model("parity", "WebhookEndpoint").objects.create(
        project=project, url=SLACK, format="slack"
    )
    try:
        latest = executor.loader.graph.leaf_nodes()
        _migrate(latest)
        assert "a-credential" not in _stored()
        assert WebhookEndpoint.objects.get().url == SLACK

        _migrate(BEFORE)
        assert _stored() == SLACK
        _migrate(latest)
    finally:
        call_command("flush", interactive=False, verbosity=0)
