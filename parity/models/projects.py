import hashlib
import re
import secrets
from datetime import datetime

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from parity import outbound
from parity.models.links import validate_web_url


class Visibility(models.TextChoices):
    PUBLIC = "public", "public: anyone may read"
    PRIVATE = "private", "private: members only"


def default_visibility() -> str:
    """New projects' visibility, from PARITY_DEFAULT_VISIBILITY (private unless told)."""
    return settings.PARITY_DEFAULT_VISIBILITY


def default_variant_keys() -> list[str]:
    return ["arch"]


class ScoreDefinition(models.TextChoices):
    """The headline score's definition (``parity.pure.scores``), a project's choice."""

    REFERENCE_PASSING = "reference_passing", "of the tests the reference passes, the share passing"
    AGREE_REFERENCE_PASSED = (
        "agree_reference_passed",
        "agreement: a test disagrees only where the reference passed and this backend did not",
    )
    AGREE_ANY = "agree_any", "agreement: a test disagrees on any difference in outcome"


class Project(models.Model):
    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=200, blank=True)
    reference_backend = models.ForeignKey(
        "Backend", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    issue_url_template = models.CharField(
        max_length=500,
        blank=True,
        help_text="URL of an issue, with {number} for its number, "
        "e.g. https://github.com/pytorch/xla/issues/{number}",
    )
    headline_compare_view = models.ForeignKey(
        "CompareView",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="At many runs a day: the overview's headline is this compare view's figures.",
    )
    default_branch = models.CharField(
        max_length=200,
        default="main",
        help_text="Runs on this branch (or with no branch) can be a backend's current run.",
    )
    normalization_rules = models.JSONField(
        default=dict,
        blank=True,
        help_text="Device tokens, class suffixes, path prefixes, module paths, a backend "
        "pattern and rewrites (docs/identity.md); empty keys fall back to the defaults.",
    )
    closed_issues_untracked = models.BooleanField(
        default=False,
        help_text="The CI verdict counts a gap whose every cited issue is closed as untracked.",
    )
    new_issue_labels = models.JSONField(
        default=list, blank=True, help_text='Labels of issues filed from parity, e.g. ["xla:tpu"].'
    )
    visibility = models.CharField(
        max_length=10,
        choices=Visibility.choices,
        default=default_visibility,
        help_text="Public: anyone may read the pages and the API. Private: members only. "
        "Either way only maintainers (and superusers) triage.",
    )
    variant_keys = models.JSONField(
        default=default_variant_keys,
        blank=True,
        help_text='Run attributes that make a backend\'s variant, e.g. ["arch"]: runs of backend '
        "rocm with arch=gfx942 go to its variant rocm-gfx942. Other attributes (runtime "
        "versions) are kept on the run.",
    )
    score_definition = models.CharField(
        max_length=30,
        choices=ScoreDefinition.choices,
        default=ScoreDefinition.REFERENCE_PASSING,
        help_text="What the headline score counts (parity.pure.scores).",
    )
    score_counts_intended = models.BooleanField(
        default=False, help_text="Intended gaps count against a backend in the headline."
    )
    score_counts_not_applicable = models.BooleanField(
        default=False,
        help_text="Tests declared not applicable on a backend count against it in the headline.",
    )
    truncation_percent = models.FloatField(
        default=5.0,
        validators=[MinValueValidator(0), MaxValueValidator(100)],
        help_text="A file whose report holds more than this % fewer tests than in the backend's "
        "last complete run reads truncated: run health, not test health (docs/run-health.md).",
    )
    history_rules = models.JSONField(
        default=dict,
        blank=True,
        help_text="States from history: overrides of parity.pure.history_states.HistoryRules "
        "(window_runs, window_days, flip_rate, min_flips, break_length, exit_green, "
        "infra_fail_fraction); docs/history-states.md.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    def clean(self) -> None:
        """The rules and the issue URL template, checked by the admin's form and by the services
        that create or edit a project (``parity.services.projects``): rules run in the worker for
        every test case, so a bad regex must fail when it is written, not there."""
        from parity.pure.normalize import RulesError, validate_rules

        try:
            validate_rules(self.normalization_rules or {})
        except RulesError as exc:
            raise ValidationError({"normalization_rules": str(exc)}) from exc
        from parity.pure.attributes import KEY_PATTERN

        keys = self.variant_keys
        if not isinstance(keys, list) or not all(
            isinstance(k, str) and re.fullmatch(KEY_PATTERN, k) for k in keys
        ):
            raise ValidationError(
                {"variant_keys": 'A list of attribute names, e.g. ["arch"] or ["arch", "os"].'}
            )
        if self.issue_url_template and "{number}" not in self.issue_url_template:
            raise ValidationError(
                {"issue_url_template": "The issue URL template needs a {number} placeholder."}
            )
        self._tracker_url_check()

    def _tracker_url_check(self) -> None:
        """The template's URLs are links on every page, so only http(s) ones; and the tracker it
        names is where issues are read and filed: one the egress policy refuses is refused here,
        saying why and which setting allows it."""
        if not self.issue_url_template:
            return
        example = self.issue_url_template.replace("{number}", "1")
        try:  # its URLs are the links of every bare "#123" a skip reason cites
            validate_web_url(example)
        except ValidationError as exc:
            raise ValidationError({"issue_url_template": exc.messages}) from None
        refusal = outbound.url_refusal(example)
        if refusal:
            raise ValidationError({"issue_url_template": refusal})

    def normalization(self):
        """The project's normalization rules (``parity.pure.normalize.Rules``), as ingest and CI's
        resolve apply them."""
        from parity.pure.normalize import rules_from_dict

        return rules_from_dict(self.normalization_rules or {})

    def score_settings(self):
        """The headline score's definition (``parity.pure.scores.Definition``)."""
        from parity.pure.scores import Definition

        return Definition(
            kind=self.score_definition,
            counts_intended=self.score_counts_intended,
            counts_not_applicable=self.score_counts_not_applicable,
        )

    def backend_named(self, name: str) -> "Backend | None":
        """The backend CI calls ``name``: by its name or one of its aliases, in any case."""
        wanted = name.strip().lower()
        for backend in self.backends.all():
            if wanted == backend.name.lower() or wanted in (a.lower() for a in backend.aliases):
                return backend
        return None

    def backend_names(self) -> str:
        """The backends' names, for messages: "cpu, gpu, tpu" (or "none yet")."""
        return ", ".join(sorted(b.name for b in self.backends.all())) or "none yet"


class Backend(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="backends")
    name = models.SlugField(max_length=50)
    aliases = models.JSONField(
        default=list, blank=True, help_text='Other names CI may send, e.g. ["cuda", "GPU"].'
    )
    family = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="variants",
        help_text="The backend this one is a variant of (rocm for rocm-gfx942); none: a family "
        "of its own.",
    )
    attributes = models.JSONField(
        default=dict,
        blank=True,
        help_text='What makes this variant, e.g. {"arch": "gfx942"} (the project\'s variant keys).',
    )
    reproduce_command = models.CharField(
        max_length=500,
        blank=True,
        help_text="How to run one test on this backend: {file}, {class}, {name}, {nodeid}, e.g. "
        "PJRT_DEVICE=TPU python {file} {class}.{name}",
    )

    class Meta:
        ordering = ["project", "name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="backend_unique_name")
        ]

    def __str__(self) -> str:
        return f"{self.project.slug}/{self.name}"


def token_digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class UploadToken(models.Model):
    """A secret that lets CI upload to one project. Only its digest is stored."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="upload_tokens")
    label = models.CharField(max_length=100, blank=True)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=8, editable=False)
    revoked = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    # A token an OIDC exchange minted (parity.oidc): it expires, and may be scoped to backends.
    expires_at = models.DateTimeField(null=True, blank=True, editable=False, db_index=True)
    backends = models.JSONField(
        default=list,
        blank=True,
        help_text="Names of the backends this token may upload to; empty: every backend.",
    )
    trust_rule = models.ForeignKey(
        "TrustRule",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="tokens",
        help_text="The trust rule whose OIDC match minted this token.",
    )

    def __str__(self) -> str:
        return f"{self.project.slug} token {self.prefix}…"

    def expired(self, now: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now

    def may_upload_to(self, backend: "Backend") -> bool:
        """A token scoped to a backend may upload to its variants too (rocm: rocm-gfx942)."""
        if not self.backends or backend.name in self.backends:
            return True
        return backend.family_id is not None and backend.family.name in self.backends

    @staticmethod
    def new_key() -> str:
        return secrets.token_urlsafe(32)


class Role(models.TextChoices):
    VIEWER = "viewer", "viewer: reads a private project"
    MAINTAINER = "maintainer", "maintainer: reads and triages"


class Membership(models.Model):
    """A user's role in one project. Superusers need none: they read and triage everything."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="parity_memberships"
    )
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.VIEWER)
    granted_by = models.CharField(
        max_length=40,
        blank=True,
        default="",
        help_text="The sign-in provider whose group mapping granted this role; each sign-in "
        "through it sets or removes it (docs/sign-in.md). Blank: granted here, left alone.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "user"]
        constraints = [
            models.UniqueConstraint(fields=["user", "project"], name="membership_unique_user")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.project.slug} ({self.role})"


class UserToken(models.Model):
    """A secret that acts as one user through the API: what the user's roles let them read and
    triage, in every project (a bot's MCP server, a script), never an upload. Only its digest is
    stored."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="parity_tokens"
    )
    label = models.CharField(max_length=100, blank=True)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=8, editable=False)
    revoked = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)

    def __str__(self) -> str:
        return f"{self.user} token {self.prefix}…"


def project_lock(*, project_id: int) -> Project:
    """Lock a project's row for this transaction: one writer of its roll-ups and triage at a
    time (recomputes, triage). FOR NO KEY UPDATE, so rows that only point at the project (runs
    and uploads of concurrent CI jobs, which take FOR KEY SHARE) never wait for it."""
    return Project.objects.select_for_update(no_key=True).get(pk=project_id)
