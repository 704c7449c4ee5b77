from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from parity.digest.render import digest_render
from parity.digest.services import (
    DigestSendFailed,
    WeekNotOver,
    digest_deliver,
    digest_week_plan,
)
from parity.models import DigestDelivery, Project
from parity.pure.weeks import BadWeek, Week
from parity.result_reads.week_uncovered import week_uncovered
from parity.selectors.digest import digest_content


class Command(BaseCommand):
    help = (
        "Send a project's weekly digest to its active subscriptions now (each at most once per "
        "week), or with --dry-run print its plain-text part."
    )

    def add_arguments(self, parser):
        parser.add_argument("project", help="The project's slug.")
        parser.add_argument(
            "--week", help="ISO week, e.g. 2026-W14; default: the last week that has ended."
        )
        parser.add_argument("--dry-run", action="store_true", help="Print, send nothing.")
        parser.add_argument(
            "--backend", action="append", default=[], help="With --dry-run: only this backend."
        )

    def handle(self, *args, **options):
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"No project '{options['project']}'.")
        try:
            week = Week.parse(options["week"]) if options["week"] else None
        except BadWeek as exc:
            raise CommandError(str(exc)) from exc
        week = week or Week.last_complete(timezone.now())
        if options["dry_run"]:
            content = digest_content(
                project=project,
                week=week,
                backends=options["backend"],
                uncovered=week_uncovered(project=project, week=week),
            )
            rendered = digest_render(content)
            self.stdout.write(f"Subject: {rendered.subject}\n\n{rendered.text}", ending="")
            return
        self._send(project, week)

    @staticmethod
    def _where_mail_went() -> str:
        """Where the mail went, when a reader could not guess it (not for the test outbox)."""
        backend = settings.EMAIL_BACKEND
        if backend.endswith("console.EmailBackend"):
            return (
                "The mail was printed above, not sent: no SMTP server is set (EMAIL_HOST; "
                "docs/settings.md)."
            )
        if backend.endswith("smtp.EmailBackend"):
            return f"Sent through SMTP at {settings.EMAIL_HOST}:{settings.EMAIL_PORT}."
        return ""

    def _send(self, project: Project, week: Week) -> None:
        # Inline rather than through Celery, so the command reports what happened.
        try:
            planned = digest_week_plan(week=week, project=project)
        except WeekNotOver as exc:
            raise CommandError(f"{exc} Use --dry-run to see it so far.") from exc
        failed = 0
        for delivery_id in planned:
            try:
                status = digest_deliver(delivery_id=delivery_id)
            except DigestSendFailed as exc:
                failed += 1
                status = f"failed ({exc})"
            email = DigestDelivery.objects.get(pk=delivery_id).subscription.email
            self.stdout.write(f"{email}: {status}")
        done = DigestDelivery.objects.filter(week=week.monday, subscription__project=project)
        sent = done.filter(status="sent").count()
        self.stdout.write(f"Digest {week} of {project.slug}: {sent} sent in all, {failed} failed.")
        if where := self._where_mail_went():
            self.stdout.write(where)
        if failed:
            raise CommandError(f"{failed} deliveries failed; run the command again to retry them.")
