"""Migration 0043 encrypts the webhook secrets a database already holds, and its reverse
decrypts them: a receiver configured before the upgrade keeps verifying deliveries."""

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from parity.models import WebhookEndpoint

BEFORE = [("parity", "0042_snapshot_not_applicable_not_passed")]
PLAIN = "a-secret-some-receiver-was-given-before-the-upgrade"


def _migrate(targets) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor


def _stored() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret FROM parity_webhookendpoint")
        [(secret,)] = cursor.fetchall()
        return secret


@pytest.mark.django_db(transaction=True)
def test_existing_secrets_are_encrypted_and_decrypted_back():
    executor = _migrate(BEFORE)
    apps = executor.loader.project_state(BEFORE).apps
    project = apps.get_model("parity", "Project").objects.create(slug="old", name="old")
    apps.get_model("parity", "WebhookEndpoint").objects.create(
        project=project, url="https://x.example.org/", secret=PLAIN
    )
    try:
        latest = executor.loader.graph.leaf_nodes()
        _migrate(latest)
        assert PLAIN not in _stored()
        assert WebhookEndpoint.objects.get().secret == PLAIN

        _migrate(BEFORE)
        assert _stored() == PLAIN
        _migrate(latest)
    finally:
        call_command("flush", interactive=False, verbosity=0)
