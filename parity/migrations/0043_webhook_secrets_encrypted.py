"""Webhook endpoints' secrets encrypted at rest (parity.models.fields): the column becomes text
(a Fernet token is longer than a secret) and each stored secret is encrypted with the keys in
use; the reverse decrypts them back, and needs the key they were encrypted with."""

from cryptography.fernet import InvalidToken
from django.db import migrations

import parity.models.fields
import parity.models.webhooks

# Raw SQL, not the historical model: its field would decrypt the plain rows it reads.
SELECT = "SELECT id, secret FROM parity_webhookendpoint ORDER BY id FOR UPDATE"
UPDATE = "UPDATE parity_webhookendpoint SET secret = %s WHERE id = %s"


def secrets_encrypt(apps, schema_editor) -> None:
    _rewrite(schema_editor, parity.models.fields.secret_encrypt)


def secrets_decrypt(apps, schema_editor) -> None:
    _rewrite(schema_editor, _decrypt)


def _decrypt(token: str) -> str:
    try:
        return parity.models.fields.secret_decrypt(token)
    except InvalidToken:
        raise RuntimeError(
            "A webhook endpoint's secret cannot be decrypted with the keys in use: list the key "
            "it was encrypted with in PARITY_SECRETS_KEYS to migrate back."
        ) from None


def _rewrite(schema_editor, change) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(SELECT)
        rows = cursor.fetchall()
        cursor.executemany(UPDATE, [(change(secret), pk) for pk, secret in rows])


class Migration(migrations.Migration):
    dependencies = [
        ("parity", "0042_snapshot_not_applicable_not_passed"),
    ]

    operations = [
        migrations.AlterField(
            model_name="webhookendpoint",
            name="secret",
            field=parity.models.fields.EncryptedTextField(
                default=parity.models.webhooks.secret_new
            ),
        ),
        migrations.RunPython(secrets_encrypt, secrets_decrypt, elidable=False),
    ]
