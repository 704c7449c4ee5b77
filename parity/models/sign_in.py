from django.db import models

from parity.models.projects import Project, Role


class GroupRole(models.Model):
    """A provider's group that grants a role in a project at each sign-in through that provider
    (``parity.services.sign_in``, docs/sign-in.md)."""

    provider = models.CharField(
        max_length=40,
        help_text="github, gitlab, or an OpenID Connect provider's id (PARITY_SIGN_IN_OIDC).",
    )
    group = models.CharField(
        max_length=255,
        help_text="GitHub: an organization (pytorch) or a team (pytorch/xla-maintainers). "
        "GitLab: a group's full path (pytorch/xla). OpenID Connect: a value of the groups "
        "claim. Compared in any case.",
    )
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="group_roles")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["provider", "group", "project"]
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "group", "project"], name="group_role_unique_group"
            )
        ]

    def __str__(self) -> str:
        return f"{self.provider}:{self.group} → {self.role} in {self.project.slug}"

    def save(self, *args, **kwargs) -> None:
        self.provider = self.provider.strip().lower()
        self.group = self.group.strip()
        super().save(*args, **kwargs)
