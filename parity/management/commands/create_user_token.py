from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from parity.services.projects import user_token_create


class Command(BaseCommand):
    help = (
        "Create an API token that acts as a user (their roles: a viewer reads, a maintainer "
        "triages) and print it (it is shown only once)."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--label", default="")

    def handle(self, *args, **options):
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"No user {options['username']!r}.")
        if not user.is_active:
            raise CommandError(f"User {user.username!r} is not active.")
        self.stdout.write(user_token_create(user=user, label=options["label"]))
