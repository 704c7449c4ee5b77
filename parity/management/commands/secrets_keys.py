"""The keys of secrets at rest (PARITY_SECRETS_KEYS, docs/operations.md): print one, or write
every webhook secret again under the newest."""

from cryptography.fernet import Fernet
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from parity.models.fields import key_derived
from parity.services.webhooks import endpoint_secrets_reencrypt


class Command(BaseCommand):
    help = "Print a key for PARITY_SECRETS_KEYS, or re-encrypt webhook secrets with the newest."

    def add_arguments(self, parser):
        commands = parser.add_subparsers(dest="action", required=True)
        commands.add_parser("new", help="print a new random key")
        commands.add_parser(
            "derived", help="print the key derived from SECRET_KEY (used while none is listed)"
        )
        commands.add_parser(
            "reencrypt", help="encrypt every webhook secret with the first key in use"
        )

    def handle(self, *args, **options):
        action = options["action"]
        if action == "new":
            self.stdout.write(Fernet.generate_key().decode())
        elif action == "derived":
            self.stdout.write(key_derived(settings.SECRET_KEY))
        else:
            self._reencrypt()

    def _reencrypt(self) -> None:
        written, unreadable = endpoint_secrets_reencrypt()
        self.stdout.write(f"{written} webhook secrets encrypted with the newest key.")
        if unreadable:
            raise CommandError(
                f"Webhook endpoints {unreadable}: their secrets cannot be read with the keys in "
                "use (left as they were). List the key they were encrypted with in "
                "PARITY_SECRETS_KEYS and run this again, or give them new secrets."
            )
