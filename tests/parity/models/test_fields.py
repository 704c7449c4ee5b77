"""Webhook secrets encrypted at rest (parity.models.fields): the database holds ciphertext, the
model reads the plain secret, and keys rotate through PARITY_SECRETS_KEYS."""

import pytest
from cryptography.fernet import Fernet, InvalidToken
from django.core.management import CommandError, call_command
from django.db import connection

from parity.models import WebhookEndpoint
from parity.models.fields import Unreadable, key_derived

OLD, NEW = Fernet.generate_key().decode(), Fernet.generate_key().decode()


def stored(endpoint: WebhookEndpoint) -> str:
    """The column as a reader of the database sees it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret FROM parity_webhookendpoint WHERE id = %s", [endpoint.pk])
        return cursor.fetchone()[0]


def opens(key: str, token: str) -> str | None:
    try:
        return Fernet(key).decrypt(token.encode()).decode()
    except InvalidToken:
        return None


@pytest.fixture
def endpoint(project):
    def _endpoint() -> WebhookEndpoint:
        return WebhookEndpoint.objects.create(project=project, url="https://x.example.org/")

    return _endpoint


def test_the_column_holds_ciphertext_keyed_from_secret_key_when_no_key_is_listed(
    endpoint, settings
):
    assert settings.PARITY_SECRETS_KEYS == []
    hook = endpoint()
    raw = stored(hook)
    assert hook.secret not in raw and len(hook.secret) >= 40
    assert opens(key_derived(settings.SECRET_KEY), raw) == hook.secret
    assert WebhookEndpoint.objects.get(pk=hook.pk).secret == hook.secret
    assert stored(endpoint()) != raw  # each its own secret, and no two tokens alike


def test_a_secret_written_under_the_old_key_reads_with_new_and_old_and_saves_under_new(
    endpoint, settings
):
    settings.PARITY_SECRETS_KEYS = [OLD]
    hook = endpoint()
    assert opens(OLD, stored(hook)) == hook.secret

    settings.PARITY_SECRETS_KEYS = [NEW, OLD]
    read = WebhookEndpoint.objects.get(pk=hook.pk)
    assert read.secret == hook.secret
    assert opens(NEW, stored(hook)) is None  # reading leaves it as it was
    read.save()
    assert opens(NEW, stored(hook)) == hook.secret and opens(OLD, stored(hook)) is None

    settings.PARITY_SECRETS_KEYS = [NEW]  # the old key can go now
    assert WebhookEndpoint.objects.get(pk=hook.pk).secret == hook.secret


def test_reencrypt_writes_every_secret_under_the_newest_key(endpoint, settings, capsys):
    settings.PARITY_SECRETS_KEYS = [OLD]
    hooks = [endpoint(), endpoint()]
    settings.PARITY_SECRETS_KEYS = [NEW, OLD]
    call_command("secrets_keys", "reencrypt")
    assert "2 webhook secrets encrypted with the newest key." in capsys.readouterr().out
    assert [opens(NEW, stored(h)) for h in hooks] == [h.secret for h in hooks]
    with connection.cursor() as cursor:
        cursor.execute("SELECT url FROM parity_webhookendpoint")
        urls = [url for (url,) in cursor.fetchall()]
    assert [opens(NEW, url) for url in urls] == ["https://x.example.org/"] * 2


def test_a_secret_no_key_opens_is_unreadable_and_kept_as_it_was(endpoint, settings):
    settings.PARITY_SECRETS_KEYS = [OLD]
    hook = endpoint()
    raw = stored(hook)
    settings.PARITY_SECRETS_KEYS = [NEW]  # rotated without listing the old key
    read = WebhookEndpoint.objects.get(pk=hook.pk)
    assert read.secret == Unreadable(raw)
    assert "PARITY_SECRETS_KEYS" in str(read.secret)
    read.active = False
    read.save()  # an edit of another field keeps the ciphertext, so the old key still opens it
    assert stored(hook) == raw
    with pytest.raises(CommandError, match=rf"endpoints \[{hook.pk}\].*PARITY_SECRETS_KEYS"):
        call_command("secrets_keys", "reencrypt")
    assert stored(hook) == raw

    settings.PARITY_SECRETS_KEYS = [NEW, OLD]
    assert WebhookEndpoint.objects.get(pk=hook.pk).secret == hook.secret


def test_the_keys_command_prints_keys_fernet_takes(settings, capsys):
    call_command("secrets_keys", "derived")
    assert capsys.readouterr().out.strip() == key_derived(settings.SECRET_KEY)
    call_command("secrets_keys", "new")
    Fernet(capsys.readouterr().out.strip())


SLACK_URL = "https://hooks.slack.com/services/T0000/B0000/a-credential-in-the-url"


def test_dumpdata_writes_ciphertext_and_loaddata_reads_it_back(project, tmp_path):
    slack = WebhookEndpoint.objects.create(project=project, url=SLACK_URL, format="slack")
    secret = slack.secret
    dump = tmp_path / "webhooks.json"

    call_command("dumpdata", "parity.webhookendpoint", output=str(dump), verbosity=0)

    text = dump.read_text()
    assert secret not in text and "a-credential" not in text
    assert text.count("parity-encrypted:") == 2  # the secret and the URL
    WebhookEndpoint.objects.all().delete()
    call_command("loaddata", str(dump), verbosity=0)
    loaded = WebhookEndpoint.objects.get()
    assert (loaded.secret, loaded.url) == (secret, SLACK_URL)
    assert stored(loaded) != secret  # stored encrypted again, not as the marked text


def test_the_url_is_stored_encrypted(project):
    slack = WebhookEndpoint.objects.create(project=project, url=SLACK_URL, format="slack")
    with connection.cursor() as cursor:
        cursor.execute("SELECT url FROM parity_webhookendpoint WHERE id = %s", [slack.pk])
        [column] = cursor.fetchone()
    assert "a-credential" not in column
    assert WebhookEndpoint.objects.get().url == SLACK_URL
