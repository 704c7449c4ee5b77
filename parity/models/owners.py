"""Code owners of a project's test files (docs/owners.md): the rules last imported from a
``CODEOWNERS`` file or a YAML (``parity.services.owners.owners_import``), and the roll-up pages
read, each test file's owners (``FileOwners``), written at import for every file the project
knows and by the engine for files that appear later (``parity.engine.owners``)."""

from django.contrib.postgres.fields import ArrayField
from django.db import models

from parity.models.results import MAX_FILE_CHARS

OWNER_CHARS = 200


class OwnersSource(models.Model):
    """What a project's owners were last imported from; its rules are the ``OwnerRule`` rows.
    No row: the project has no owners, and nothing is matched."""

    project = models.OneToOneField("Project", on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=200, help_text="The file imported, e.g. .github/CODEOWNERS.")
    text = models.TextField(help_text="The file as imported.")
    root = models.CharField(
        max_length=MAX_FILE_CHARS,
        blank=True,
        help_text="Where the project's test file paths start inside the repository ('' when "
        "they are relative to its root, as ingest stores them by default).",
    )
    skipped = models.JSONField(
        default=list, help_text="Lines not taken: [{line, text, why}] (GitHub ignores them too)."
    )
    imported_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"owners of project {self.project_id} from {self.name}"


class OwnerRule(models.Model):
    """One rule of the import, in file order: the last that matches a path decides its owners
    (none, for a rule without owners)."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField()
    line = models.PositiveIntegerField(help_text="Its line in the file imported.")
    pattern = models.TextField()
    owners = ArrayField(models.CharField(max_length=OWNER_CHARS), blank=True, default=list)
    regex = models.TextField(help_text="Over repository-relative paths; Postgres and Python alike.")

    class Meta:
        ordering = ["project", "position"]
        constraints = [
            models.UniqueConstraint(fields=["project", "position"], name="ownerrule_unique")
        ]

    def __str__(self) -> str:
        return f"{self.pattern} {' '.join(self.owners)}"


class FileOwners(models.Model):
    """A test file's owners under the project's rules: a row per file the project had when the
    rules were imported or that the engine has seen since; ``owners`` empty when no rule, or
    an un-owning rule, decides it. Pages join it by (project, file)."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="+")
    # Compared byte by byte, as ``TestCase.file`` is.
    file = models.CharField(max_length=MAX_FILE_CHARS, db_collation="C")
    owners = ArrayField(models.CharField(max_length=OWNER_CHARS), blank=True, default=list)
    rule_line = models.PositiveIntegerField(
        null=True, blank=True, help_text="The deciding rule's line; None: no rule matches."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "file"], name="fileowners_unique")
        ]

    def __str__(self) -> str:
        return f"{self.file}: {' '.join(self.owners) or '(no owner)'}"
