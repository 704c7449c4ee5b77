"""The services of OIDC trust: trust rules written (admin, ``manage.py oidc_trust``), and a
verified token's identity exchanged for a short-lived upload token.

Why an exchange and not the ID token on every request: everything that takes an upload token
(uploads, their status, completing a run, the read API, the per-token upload throttle, the
access rule) keeps working unchanged with the minted one; the JWT's signature and the issuer's
keys are checked once per CI job, not on each of its shard uploads and status polls; and the
ID token, which an issuer makes valid for minutes, need not outlive the job's wait for ingest.
"""

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from parity.models import Project, TrustRule, UploadToken
from parity.models.trust import GITHUB_ISSUER
from parity.oidc.tokens import OidcRefused
from parity.pure.oidc_claims import CiIdentity, identity_from_claims, rules_match
from parity.services.projects import upload_token_create

logger = logging.getLogger(__name__)

# Expired exchanged tokens stay this long (the admin shows which rule minted them), then go.
EXPIRED_KEPT = timedelta(days=1)


class TrustRuleRejected(ValueError):
    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Exchanged:
    key: str
    project: Project
    expires_at: datetime
    backends: list[str]
    rule: TrustRule
    identity: CiIdentity


@transaction.atomic
def upload_token_exchange(*, claims: dict, project_slug: str) -> Exchanged:
    """A short-lived upload token of ``project_slug`` for the verified ``claims``, if one of
    the project's trust rules matches them; ``OidcRefused`` naming the claim otherwise. An
    unknown project answers as one without rules: a stranger cannot tell them apart."""
    identity = identity_from_claims(claims)
    rules = list(
        TrustRule.objects.filter(project__slug=project_slug)
        .select_related("project")
        .prefetch_related("backends")
    )
    if not rules:
        logger.warning(
            "oidc: %s (%s) asked for %s, which has no rule",
            identity.subject,
            identity.issuer,
            project_slug,
        )
        raise OidcRefused(
            "project",
            f"Project '{project_slug}' has no trust rule: an admin adds one "
            "(manage.py oidc_trust add, or the admin's trust rules).",
        )
    rule, mismatches = rules_match(rules, identity)
    if rule is None:
        reasons = "; ".join(f"rule {m.rule_id}: {m.why}" for m in mismatches)
        logger.warning(
            "oidc: %s matched no rule of %s: %s", identity.subject, project_slug, reasons
        )
        raise OidcRefused(
            mismatches[0].claim,
            f"No trust rule of project '{project_slug}' matches this token ({reasons}).",
        )
    return _mint(rule, identity)


def _mint(rule: TrustRule, identity: CiIdentity) -> Exchanged:
    now = timezone.now()
    expires_at = now + timedelta(seconds=settings.PARITY_OIDC_TOKEN_SECONDS)
    backends = sorted(b.name for b in rule.backends.all())
    key = upload_token_create(
        project=rule.project,
        label=f"oidc {identity.describe()} {identity.workflow or ''}".strip(),
        expires_at=expires_at,
        backends=backends,
        trust_rule=rule,
    )
    UploadToken.objects.filter(expires_at__lt=now - EXPIRED_KEPT).delete()
    logger.info(
        "oidc: rule %s of %s trusted %s (%s); token until %s",
        rule.pk,
        rule.project.slug,
        identity.subject,
        identity.describe(),
        expires_at.isoformat(),
    )
    return Exchanged(
        key=key,
        project=rule.project,
        expires_at=expires_at,
        backends=backends,
        rule=rule,
        identity=identity,
    )


@transaction.atomic
def trust_rule_create(
    *,
    project: Project,
    repository: str,
    repository_id: str = "",
    ref: str = "",
    workflow: str = "",
    environment: str = "",
    backends: list[str] | None = None,
    issuer: str = GITHUB_ISSUER,
    label: str = "",
) -> TrustRule:
    """A rule trusting ``issuer``'s tokens of ``repository`` (and the other fields, where
    given) to upload to ``project`` (to ``backends`` only, when named)."""
    chosen = []
    for name in backends or []:
        backend = project.backend_named(name)
        if backend is None:
            raise TrustRuleRejected(
                f"Unknown backend '{name}' of project '{project.slug}'. "
                f"Known: {project.backend_names()}.",
                field="backends",
            )
        chosen.append(backend)
    rule = TrustRule(
        project=project,
        issuer=issuer.strip().rstrip("/"),
        repository=repository.strip(),
        repository_id=repository_id.strip(),
        ref=ref.strip(),
        workflow=workflow.strip(),
        environment=environment.strip(),
        label=label,
    )
    try:
        rule.full_clean(exclude=["project"])
    except ValidationError as exc:
        field, messages = next(iter(exc.message_dict.items()))
        raise TrustRuleRejected(f"{field}: {' '.join(messages)}", field=field) from exc
    rule.save()
    rule.backends.set(chosen)
    return rule


@transaction.atomic
def trust_rule_delete(*, rule_id: int) -> TrustRule:
    """Delete the rule, and revoke the tokens it minted that have not expired yet: removing
    trust stops the CI jobs that hold it at once."""
    rule = TrustRule.objects.select_related("project").filter(pk=rule_id).first()
    if rule is None:
        raise TrustRuleRejected(f"No trust rule {rule_id}.")
    UploadToken.objects.filter(trust_rule=rule).update(revoked=True)
    rule.delete()
    return rule
