from django.core.management.base import BaseCommand, CommandError

from parity.digest.links import unsubscribe_url
from parity.digest.services import SubscriptionRejected, subscription_subscribe
from parity.models import Project


class Command(BaseCommand):
    help = "Subscribe an address to a project's weekly digest (again: reactivate, refilter)."

    def add_arguments(self, parser):
        parser.add_argument("email")
        parser.add_argument("project", help="The project's slug.")
        parser.add_argument(
            "--backend",
            action="append",
            default=[],
            help="Only this backend (repeatable, or comma-separated); default: every backend.",
        )
        parser.add_argument(
            "--owner",
            default="",
            help="Only the gaps of this code owner's test files ('my gaps'), as the project's "
            "CODEOWNERS names it: @user, @org/team or an email.",
        )

    def handle(self, *args, **options):
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            known = ", ".join(Project.objects.values_list("slug", flat=True)) or "none"
            raise CommandError(f"No project '{options['project']}' (projects: {known}).")
        backends = [b.strip() for arg in options["backend"] for b in arg.split(",") if b.strip()]
        try:
            subscription, created = subscription_subscribe(
                project=project, email=options["email"], backends=backends, owner=options["owner"]
            )
        except SubscriptionRejected as exc:
            raise CommandError(str(exc)) from exc
        scope = ", ".join(sorted(backends)) if backends else "every backend"
        if subscription.owner:
            scope += f"; {subscription.owner}'s gaps"
        verb = "Subscribed" if created else "Updated the subscription of"
        self.stdout.write(f"{verb} {subscription.email} to {project.slug} ({scope}).")
        self.stdout.write(f"Unsubscribe link: {unsubscribe_url(token=subscription.token)}")
