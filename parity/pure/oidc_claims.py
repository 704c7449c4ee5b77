"""A verified token's claims as one CI identity, and its match against trust rules; and what a
trust rule's issuer may be (``issuer_check``). Pure: plain values in, a reason out.

Issuers name the same things differently; a rule is written in GitHub's terms and read here:

==============  ======================  ==============================  =========================
field           GitHub Actions          GitLab CI                       Buildkite
==============  ======================  ==============================  =========================
repository      ``repository``          ``project_path``                ``organization_slug``/
                                                                        ``pipeline_slug``
repository_id   ``repository_id``       ``project_id``                  ``pipeline_id``
ref             ``ref``                 ``refs/heads/`` or              ``refs/heads/``
                                        ``refs/tags/`` + ``ref``        + ``build_branch``
                                        (by ``ref_type``)               (``refs/tags/`` + tag)
workflow        ``workflow``            (none)                          (none)
environment     ``environment``         ``environment``                 (none)
==============  ======================  ==============================  =========================
"""

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from ipaddress import ip_address
from typing import Protocol
from urllib.parse import urlsplit

FIELDS = ("repository", "repository_id", "ref", "workflow", "environment")


class IssuerError(ValueError):
    """An issuer URL an operator or a trust rule gives that cannot be one."""


def issuer_check(url: str) -> str:
    """``url`` if it can be an issuer: https, or http on a loopback address (a local test
    issuer). Issuers are compared as written, without a trailing slash."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return url.rstrip("/")
    if parts.scheme == "http" and _loopback(parts.hostname or ""):
        return url.rstrip("/")
    raise IssuerError(f"An issuer is an https:// URL (got {url!r}).")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class CiIdentity:
    issuer: str
    repository: str | None
    repository_id: str | None
    ref: str | None
    workflow: str | None
    environment: str | None
    subject: str

    def describe(self) -> str:
        return f"{self.repository or '?'} {self.ref or ''}".strip()


def _text(value: object) -> str | None:
    return None if value is None or value == "" else str(value)


def _gitlab_ref(claims: Mapping) -> str | None:
    ref = _text(claims.get("ref"))
    if ref is None or ref.startswith("refs/"):
        return ref
    return f"refs/tags/{ref}" if claims.get("ref_type") == "tag" else f"refs/heads/{ref}"


def identity_from_claims(claims: Mapping) -> CiIdentity:
    """The CI identity of a verified token's ``claims``, from GitHub's, GitLab's or
    Buildkite's names (the module's table)."""
    issuer = str(claims.get("iss", "")).rstrip("/")
    subject = str(claims.get("sub", ""))
    if "repository" in claims:  # GitHub Actions
        return CiIdentity(
            issuer=issuer,
            repository=_text(claims.get("repository")),
            repository_id=_text(claims.get("repository_id")),
            ref=_text(claims.get("ref")),
            workflow=_text(claims.get("workflow")),
            environment=_text(claims.get("environment")),
            subject=subject,
        )
    if "project_path" in claims:  # GitLab
        return CiIdentity(
            issuer=issuer,
            repository=_text(claims.get("project_path")),
            repository_id=_text(claims.get("project_id")),
            ref=_gitlab_ref(claims),
            workflow=None,
            environment=_text(claims.get("environment")),
            subject=subject,
        )
    organization, pipeline = claims.get("organization_slug"), claims.get("pipeline_slug")
    tag, branch = _text(claims.get("build_tag")), _text(claims.get("build_branch"))
    return CiIdentity(  # Buildkite, or an issuer with none of these claims (nothing matches)
        issuer=issuer,
        repository=f"{organization}/{pipeline}" if organization and pipeline else None,
        repository_id=_text(claims.get("pipeline_id")),
        ref=f"refs/tags/{tag}" if tag else (f"refs/heads/{branch}" if branch else None),
        workflow=None,
        environment=None,
        subject=subject,
    )


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern:
    parts = []
    for piece in re.split(r"(\*\*|\*|\?)", pattern):
        if piece == "**":
            parts.append(".*")
        elif piece == "*":
            parts.append("[^/]*")
        elif piece == "?":
            parts.append("[^/]")
        else:
            parts.append(re.escape(piece))
    return re.compile("".join(parts))


def glob_match(pattern: str, value: str) -> bool:
    """``refs/heads/*`` matches ``refs/heads/main``, not ``refs/heads/a/b``; ``**`` does."""
    return _glob_regex(pattern).fullmatch(value) is not None


class Rule(Protocol):
    pk: int
    issuer: str
    repository: str
    repository_id: str
    ref: str
    workflow: str
    environment: str


def _field_matches(name: str, wanted: str, value: str) -> bool:
    if name == "repository":
        return wanted.strip("/").casefold() == value.casefold()
    if name in ("ref", "workflow"):
        return glob_match(wanted, value)
    return wanted == value


def rule_mismatch(rule: Rule, identity: CiIdentity) -> tuple[str, str] | None:
    """(the claim, why) of the first field of ``rule`` that ``identity`` fails, or None when
    it matches. The reason shows the token's value, never what the rule expects: a caller
    with a token of another repository learns nothing of the project's rules."""
    if rule.issuer.rstrip("/") != identity.issuer:
        return "iss", f"issuer '{identity.issuer}' is not the rule's"
    for name in FIELDS:
        wanted = getattr(rule, name)
        if not wanted:
            continue
        value = getattr(identity, name)
        if value is None:
            return name, f"the token has no '{name}' claim"
        if not _field_matches(name, wanted, value):
            return name, f"{name} '{value}' does not match"
    return None


@dataclass(frozen=True)
class Mismatch:
    rule_id: int
    claim: str
    why: str


def rules_match(rules: Iterable[Rule], identity: CiIdentity) -> tuple[Rule | None, list[Mismatch]]:
    """The first rule ``identity`` matches (None if none), and why each rule before it failed."""
    mismatches = []
    for rule in rules:
        mismatch = rule_mismatch(rule, identity)
        if mismatch is None:
            return rule, mismatches
        mismatches.append(Mismatch(rule_id=rule.pk, claim=mismatch[0], why=mismatch[1]))
    return None, mismatches
