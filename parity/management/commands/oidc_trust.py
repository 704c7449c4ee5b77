"""Trust rules of OIDC-authenticated CI (docs/oidc.md): add, list, remove."""

from django.core.management.base import BaseCommand, CommandError

from parity.management.arguments import project_argument
from parity.models import TrustRule
from parity.models.trust import GITHUB_ISSUER
from parity.oidc.exchange import TrustRuleRejected, trust_rule_create, trust_rule_delete


class Command(BaseCommand):
    help = "Add, list or remove the OIDC trust rules that let CI upload without a secret."

    def add_arguments(self, parser):
        commands = parser.add_subparsers(dest="action", required=True)
        add = commands.add_parser("add", help="trust CI tokens of a repository for a project")
        add.add_argument("project")
        add.add_argument("--repository", required=True, help="owner/name")
        add.add_argument("--repository-id", default="", help="its numeric id (advised)")
        add.add_argument("--ref", default="", help="a glob, e.g. 'refs/heads/main'")
        add.add_argument("--workflow", default="", help="a glob over the workflow's name")
        add.add_argument("--environment", default="")
        add.add_argument("--backends", default="", help="comma-separated; default: all")
        add.add_argument("--issuer", default=GITHUB_ISSUER, help=f"default {GITHUB_ISSUER}")
        add.add_argument("--label", default="")
        listing = commands.add_parser("list", help="the rules (of one project)")
        listing.add_argument("project", nargs="?")
        remove = commands.add_parser("remove", help="delete a rule; revoke its tokens")
        remove.add_argument("rule_id", type=int)

    def handle(self, *args, **options):
        try:
            getattr(self, f"_{options['action']}")(options)
        except TrustRuleRejected as exc:
            raise CommandError(str(exc)) from exc

    def _add(self, options) -> None:
        rule = trust_rule_create(
            project=project_argument(options["project"]),
            repository=options["repository"],
            repository_id=options["repository_id"],
            ref=options["ref"],
            workflow=options["workflow"],
            environment=options["environment"],
            backends=[b.strip() for b in options["backends"].split(",") if b.strip()],
            issuer=options["issuer"],
            label=options["label"],
        )
        self.stdout.write(f"rule {rule.pk}: {_describe(rule)}")

    def _list(self, options) -> None:
        rules = TrustRule.objects.select_related("project").prefetch_related("backends")
        if options["project"]:
            rules = rules.filter(project=project_argument(options["project"]))
        for rule in rules:
            self.stdout.write(f"rule {rule.pk}: {_describe(rule)}")

    def _remove(self, options) -> None:
        rule = trust_rule_delete(rule_id=options["rule_id"])
        self.stdout.write(f"removed rule {options['rule_id']} of {rule.project.slug}")


def _describe(rule: TrustRule) -> str:
    fields = [
        f"{name}={getattr(rule, name)}"
        for name in ("repository", "repository_id", "ref", "workflow", "environment")
        if getattr(rule, name)
    ]
    backends = ",".join(sorted(b.name for b in rule.backends.all())) or "all"
    return f"{rule.project.slug} trusts {rule.issuer} {' '.join(fields)} backends={backends}"
