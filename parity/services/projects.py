"""Writes that set up projects, backends, upload tokens and users' tokens (management commands,
admin, tests)."""

from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from parity.engine import project_recompute
from parity.models import Backend, Project, TrustRule, UploadToken, UserToken
from parity.models.projects import project_lock, token_digest
from parity.services.classification import skip_rules_give_default


class ProjectSetupError(ValueError):
    pass


@transaction.atomic
def project_create(
    *,
    slug: str,
    backends: list[str],
    reference: str,
    issue_url_template: str = "",
    name: str = "",
    default_branch: str = "main",
    visibility: str | None = None,
    variant_keys: list[str] | None = None,
) -> Project:
    """``visibility`` None: PARITY_DEFAULT_VISIBILITY; ``variant_keys`` None: the default."""
    names = [b.strip().lower() for b in backends if b.strip()]
    if not names:
        raise ProjectSetupError("Give at least one backend, e.g. --backends cpu,gpu,tpu,neuron.")
    if reference.lower() not in names:
        raise ProjectSetupError(f"The reference backend '{reference}' is not among {names}.")
    if Project.objects.filter(slug=slug).exists():
        raise ProjectSetupError(f"Project '{slug}' already exists.")
    project = Project(
        slug=slug,
        name=name or slug,
        issue_url_template=issue_url_template,
        default_branch=default_branch.strip() or "main",
        **({"visibility": visibility} if visibility else {}),
        **({"variant_keys": variant_keys} if variant_keys is not None else {}),
    )
    try:  # Project.clean checks the issue URL template and the rules
        project.clean()
    except ValidationError as exc:
        raise ProjectSetupError("; ".join(exc.messages)) from exc
    project.save()
    created = Backend.objects.bulk_create(Backend(project=project, name=n) for n in names)
    project.reference_backend = next(b for b in created if b.name == reference.lower())
    project.save(update_fields=["reference_backend"])
    skip_rules_give_default(project=project)
    return project


@transaction.atomic
def project_save(*, project: Project) -> bool:
    """Save ``project`` as edited (the admin's form, ``update_project``). When what it compares
    changed against the stored row, its default branch (whose complete runs can be current) or
    its reference backend, rebuild parity from the current runs that follow, in the same
    transaction: no page shows a comparison the project no longer makes. True if it rebuilt.
    ``ProjectSetupError`` for a blank branch or another project's backend as the reference."""
    project.default_branch = project.default_branch.strip()
    if not project.default_branch:
        raise ProjectSetupError("The default branch cannot be blank, e.g. main.")
    reference = project.reference_backend
    if reference is not None and reference.project_id != project.pk:
        raise ProjectSetupError(
            f"The reference backend '{reference.name}' is not among {project.backend_names()}."
        )
    stored = project_lock(project_id=project.pk)  # one writer: a recompute waits for this one
    compared = (stored.default_branch, stored.reference_backend_id)
    project.save()
    if compared == (project.default_branch, project.reference_backend_id):
        return False
    project_recompute(project=project)
    return True


def project_rules_update(*, project: Project, rules: dict) -> Project:
    """Replace ``project``'s normalization rules; ``ValidationError`` naming the rule at fault
    (``rewrites[0].pattern``) when one is invalid, and then nothing is stored."""
    project.normalization_rules = rules
    try:
        project.clean()
    except ValidationError:
        project.refresh_from_db(fields=["normalization_rules"])
        raise
    project.save(update_fields=["normalization_rules"])
    return project


def project_score_set(
    *,
    project: Project,
    definition: str | None = None,
    counts_intended: bool | None = None,
    counts_not_applicable: bool | None = None,
) -> Project:
    """Change what the project's headline score counts (``parity.pure.scores``; None: keep), and
    recount its current snapshots at once, so every page shows the new figure. Snapshots of
    older runs keep the counts they had: an agreement definition reads the reference's
    non-passing tests only from the runs recounted since a project chose one."""
    from parity.engine.gap_triages import triages_refresh
    from parity.models.projects import ScoreDefinition

    if definition is not None and definition not in ScoreDefinition.values:
        raise ValidationError(
            {"score_definition": f"Unknown definition {definition!r}: one of "
             f"{', '.join(ScoreDefinition.values)}."}
        )  # fmt: skip
    with transaction.atomic():
        project = project_lock(project_id=project.pk)
        if definition is not None:
            project.score_definition = definition
        if counts_intended is not None:
            project.score_counts_intended = counts_intended
        if counts_not_applicable is not None:
            project.score_counts_not_applicable = counts_not_applicable
        project.save(
            update_fields=[
                "score_definition", "score_counts_intended", "score_counts_not_applicable"
            ]
        )  # fmt: skip
        triages_refresh(project=project)
    return project


def upload_token_create(
    *,
    project: Project,
    label: str = "",
    expires_at: datetime | None = None,
    backends: list[str] | None = None,
    trust_rule: TrustRule | None = None,
) -> str:
    """Create a token and return its key; only a digest is stored, so show the key now. An
    OIDC exchange's token (``parity.oidc.exchange``) expires and may be scoped to backends."""
    key = UploadToken.new_key()
    UploadToken.objects.create(
        project=project,
        label=label[:100],
        digest=token_digest(key),
        prefix=key[:8],
        expires_at=expires_at,
        backends=backends or [],
        trust_rule=trust_rule,
    )
    return key


# A token's last use is kept to the minute: a CI run's shard jobs post dozens of uploads at once
# with one token, and writing its row for each would queue every one of them on that row's lock.
TOKEN_LAST_USED_RESOLUTION = timedelta(minutes=1)


def upload_token_used(*, token: UploadToken | UserToken) -> None:
    """Record that ``token`` (an upload token or a user's) authenticated a request now (to the
    minute)."""
    now = timezone.now()
    last = token.last_used_at
    if last is not None and now - last < TOKEN_LAST_USED_RESOLUTION:
        return
    type(token).objects.filter(pk=token.pk).update(last_used_at=now)
    token.last_used_at = now


def user_token_create(*, user, label: str = "") -> str:
    """Create a token that acts as ``user`` through the API and return its key (shown once:
    only a digest is stored)."""
    key = UploadToken.new_key()
    UserToken.objects.create(user=user, label=label[:100], digest=token_digest(key), prefix=key[:8])
    return key
