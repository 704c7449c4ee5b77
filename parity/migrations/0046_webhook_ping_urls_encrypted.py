"""Webhook endpoints' URLs encrypted at rest like their secrets (parity.models.fields): a Slack
incoming webhook's URL is its credential. The column becomes text and each stored URL is
encrypted with the keys in use; the reverse decrypts them back (it needs the key they were
encrypted with) before the column is a 500-character one again. And the ``ping`` event: the
test event a maintainer sends an endpoint from the project's webhooks page."""

import django.core.validators
from cryptography.fernet import InvalidToken
from django.db import migrations, models

import parity.models.fields

# Raw SQL, not the historical model: its field would decrypt the plain rows it reads.
SELECT = "SELECT id, url FROM parity_webhookendpoint ORDER BY id FOR UPDATE"
UPDATE = "UPDATE parity_webhookendpoint SET url = %s WHERE id = %s"


def urls_encrypt(apps, schema_editor) -> None:
    _rewrite(schema_editor, parity.models.fields.secret_encrypt)


def urls_decrypt(apps, schema_editor) -> None:
    _rewrite(schema_editor, _decrypt)


def _decrypt(token: str) -> str:
    try:
        return parity.models.fields.secret_decrypt(token)
    except InvalidToken:
        raise RuntimeError(
            "A webhook endpoint's URL cannot be decrypted with the keys in use: list the key "
            "it was encrypted with in PARITY_SECRETS_KEYS to migrate back."
        ) from None


def _rewrite(schema_editor, change) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(SELECT)
        rows = cursor.fetchall()
        cursor.executemany(UPDATE, [(change(url), pk) for pk, url in rows])


class Migration(migrations.Migration):
    dependencies = [
        ("parity", "0045_web_urls"),
    ]

    operations = [
        migrations.AlterField(
            model_name="webhookendpoint",
            name="url",
            field=parity.models.fields.EncryptedTextField(
                validators=[
                    django.core.validators.URLValidator(),
                    django.core.validators.MaxLengthValidator(500),
                ]
            ),
        ),
        migrations.RunPython(urls_encrypt, urls_decrypt, elidable=False),
        migrations.AlterField(
            model_name="webhooknotice",
            name="event",
            field=models.CharField(
                choices=[
                    ("untracked_gaps", "untracked gaps opened or closed"),
                    ("coverage_drop", "coverage drop"),
                    ("exemption_expiring", "exemption expiring soon"),
                    ("exemption_passes_now", "exemption passes now"),
                    ("digest_ready", "weekly digest ready"),
                    ("ping", "test event (sent on request)"),
                ],
                max_length=30,
            ),
        ),
    ]
