"""Trust rules: which CI identities (OIDC ID tokens of an issuer) may upload to a project without
a long-lived upload token. ``parity.oidc`` verifies a token and matches it against these."""

from django.core.exceptions import ValidationError
from django.db import models

from parity.pure.oidc_claims import IssuerError, issuer_check

GITHUB_ISSUER = "https://token.actions.githubusercontent.com"


class TrustRule(models.Model):
    """A project trusts the tokens of ``issuer`` whose claims match every non-empty field. An
    empty field matches anything; ``ref`` and ``workflow`` are globs (``*`` stays within one
    ``/`` segment, ``**`` crosses them)."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="trust_rules")
    issuer = models.CharField(
        max_length=300,
        default=GITHUB_ISSUER,
        help_text="The token's 'iss'; it must also be listed in PARITY_OIDC_ISSUERS.",
    )
    repository = models.CharField(
        max_length=200,
        help_text="owner/name (GitHub 'repository'; GitLab 'project_path'; Buildkite "
        "'organization/pipeline'). Compared without case.",
    )
    repository_id = models.CharField(
        max_length=50,
        blank=True,
        help_text="The repository's numeric id: a deleted and re-created repository of the "
        "same name does not match it. Strongly advised.",
    )
    ref = models.CharField(
        max_length=200,
        blank=True,
        help_text="A glob over the git ref, e.g. refs/heads/main, "
        "refs/heads/release/**, refs/tags/v*. Empty: any ref.",
    )
    workflow = models.CharField(
        max_length=200, blank=True, help_text="A glob over GitHub's 'workflow' (its name)."
    )
    environment = models.CharField(
        max_length=100, blank=True, help_text="The deployment environment the job runs in."
    )
    backends = models.ManyToManyField(
        "Backend",
        blank=True,
        related_name="+",
        help_text="The backends its tokens may upload to; none selected: every backend.",
    )
    label = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "pk"]

    def __str__(self) -> str:
        return f"{self.project.slug}: {self.repository}" + (f" {self.ref}" if self.ref else "")

    def clean(self) -> None:
        try:
            issuer_check(self.issuer)
        except IssuerError as exc:
            raise ValidationError({"issuer": str(exc)}) from exc
        if "/" not in self.repository.strip("/"):
            raise ValidationError({"repository": "Give the repository as owner/name."})
