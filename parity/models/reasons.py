from django.db import models

from parity.models.links import WEB_URL_OR_EMPTY, validate_web_url


class IssueState(models.TextChoices):
    UNKNOWN = "unknown"  # never synced: no adapter or token for its tracker, or not yet
    OPEN = "open"
    CLOSED = "closed"


class TrackingIssue(models.Model):
    """An issue or PR that tracks why tests are skipped or failing (GitHub, Buganizer, JIRA…).
    Its state, title and labels are the tracker's, as the last sync read them."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="issues")
    kind = models.CharField(max_length=20)
    key = models.CharField(max_length=200, help_text='e.g. "pytorch/xla#4298", "b/123456".')
    url = models.URLField(max_length=500, blank=True, validators=[validate_web_url])
    state = models.CharField(
        max_length=10,
        choices=IssueState.choices,
        default=IssueState.UNKNOWN,
        db_default=IssueState.UNKNOWN,
    )
    title = models.TextField(blank=True, db_default="")
    labels = models.JSONField(default=list, blank=True, db_default=[])
    assignee = models.CharField(max_length=200, blank=True, db_default="")
    closed_at = models.DateTimeField(null=True, blank=True)
    # The tracker's ETag of the last answer, for a conditional request (a 304 costs no quota).
    etag = models.CharField(max_length=200, blank=True, db_default="")
    synced_at = models.DateTimeField(null=True, blank=True)
    sync_error = models.TextField(blank=True, db_default="")

    class Meta:
        ordering = ["key"]
        constraints = [
            models.UniqueConstraint(fields=["project", "key"], name="issue_unique_key"),
            # Every writer, bulk ones too: a stored URL is an href on the dashboard.
            models.CheckConstraint(condition=WEB_URL_OR_EMPTY, name="issue_url_web"),
        ]

    def __str__(self) -> str:
        return self.key


class ReasonKind(models.TextChoices):
    SKIP = "skip"
    FAILURE = "failure"


class Disposition(models.TextChoices):
    """What a skip category asks of the team: ``parity.pure.skip_rules.DISPOSITIONS`` says
    each (a test holds the two lists equal)."""

    INTENDED = "intended"
    NEEDS_WORK = "needs_work", "needs work"
    INFRA = "infra"
    UNKNOWN = "unknown"


class Reason(models.Model):
    """A canonical skip (or failure) reason: the many spellings of one message count as one."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="reasons")
    kind = models.CharField(max_length=10, choices=ReasonKind.choices, default=ReasonKind.SKIP)
    text = models.TextField()
    fingerprint = models.CharField(max_length=64)
    issues = models.ManyToManyField(TrackingIssue, blank=True, related_name="reasons")
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    # Its skip category, by the project's rules (``parity.services.classification``): written
    # by the classification pass, never by ingest; ``rules_version`` is the version of the
    # rules that gave it ("" until a pass classifies it).
    category = models.CharField(max_length=60, blank=True, default="", db_default="")
    disposition = models.CharField(
        max_length=12, choices=Disposition.choices, default="unknown", db_default="unknown"
    )
    rules_version = models.CharField(max_length=12, blank=True, default="", db_default="")

    class Meta:
        ordering = ["project", "kind", "text"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "kind", "fingerprint"], name="reason_unique_fingerprint"
            )
        ]

    def __str__(self) -> str:
        return self.text[:80]


class SkipRule(models.Model):
    """One of a project's ordered skip-reason rules (``parity.pure.skip_rules``): the first
    whose every pattern matches gives a skip its category and disposition."""

    project = models.ForeignKey("Project", on_delete=models.CASCADE, related_name="skip_rules")
    position = models.PositiveIntegerField(help_text="Rules are tried lowest first.")
    category = models.CharField(max_length=60)
    disposition = models.CharField(max_length=12, choices=Disposition.choices)
    message = models.TextField(blank=True, help_text="A regular expression on the skip message.")
    file = models.TextField(blank=True, help_text="A regular expression on the test's file.")
    klass = models.TextField("class", blank=True, help_text="On the test's class.")
    name = models.TextField(blank=True, help_text="On the test's name.")
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["project", "position", "pk"]

    def __str__(self) -> str:
        return f"{self.position}: {self.category}"
