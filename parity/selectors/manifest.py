"""What CI runs on a backend: the backend's exemptions (triages naming tests or patterns, not
expired) and the test files it must run, which are every test file of the reference backend's
current run minus those a file-level exemption removes. So a new test file runs everywhere
by default, and nobody keeps a per-backend copy of the list.

``manifest_resolve`` answers which of a runner's collected tests are exempted, naming them as
the runner does: they are canonicalized with the project's own rules, by the code ingest uses.

A manifest has a ``version``, a hash of its exemptions, its reason exemptions (triages naming a
skip reason: CI cannot apply them, yet they exempt tests as much as a pattern does) and files
(not of durations, which move every night): CI sends the version it applied with its upload,
and the verdict says what changed since. Each exemption says whether it ``passes_now``: every
test it covers passed in the backend's latest probe run (``parity.engine.probes``).

A variant (``rocm-gfx942``) gets its family's exemptions too. A conditioned exemption
(``Triage.condition``) is in the manifest only where its condition holds for the attributes the
request sends, or, when it sends none, for the backend's and its current run's.
"""

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace

from django.db.models import F

from parity.definitions import triages_in_force, triages_on_backend
from parity.models import (
    Backend,
    BackendState,
    FileCell,
    ProbeOutcome,
    Project,
    Triage,
    TriageKind,
)
from parity.pure.attributes import condition_applies, variant_name
from parity.pure.globs import file_matches, is_file_level, key_matches, key_parts
from parity.pure.normalize.runner_ids import runner_identity
from parity.selectors.fragments import issue_urls

# Kinds that take tests out of a run; quarantined tests still run.
SKIPPING_KINDS = (TriageKind.TRACKED, TriageKind.INTENDED)
DEFAULT_REASONS = {
    TriageKind.TRACKED: "Exempted: a known issue",
    TriageKind.QUARANTINE: "Quarantined: flaky",
}


@dataclass(frozen=True)
class Exemption:
    id: int
    match: str
    kind: str
    reason: str
    issue: str | None
    expires: str | None
    message: str  # the skip message CI uses: "<reason> (<issue URL>)"
    file_level: bool
    regex: str  # internal: what a pattern's ``match`` matches, over canonical keys ("" for a test)
    shape: str  # internal: parity.pure.globs.pattern_shape of ``match`` ("key" for a test)
    passes_now: bool = False  # every test it covers passed in the backend's latest probe run
    condition: str = ""  # where it applies (parity.pure.attributes); "": everywhere


@dataclass(frozen=True)
class ReasonExemption:
    """A triage naming a skip reason: it covers whatever skips with that reason."""

    id: int
    match: str  # "reason: <the reason's text>"
    kind: str
    condition: str = ""


@dataclass(frozen=True)
class Manifest:
    project: str
    backend: str
    reference: str
    exemptions: list[Exemption]
    files: list[str]
    durations: dict[str, float]
    left_out: list[str]  # internal: the reference's files that file-level exemptions removed
    reasons: list[ReasonExemption] = field(default_factory=list)  # internal: hashed, not served

    def as_dict(self) -> dict:
        body = asdict(self)
        del body["left_out"], body["reasons"]
        for exemption in body["exemptions"]:
            del exemption["regex"], exemption["shape"]
        body["version"] = self.version
        return body

    @property
    def version(self) -> str:
        """What CI applies, hashed: the exemptions (without whether they pass now), the reason
        exemptions and files."""
        # An empty condition is left out, so lists written before conditions keep their hash.
        exemptions = [
            {
                k: v
                for k, v in asdict(e).items()
                if k not in ("regex", "shape", "passes_now") and (k != "condition" or v)
            }
            for e in self.exemptions
        ]
        reasons = [
            {k: v for k, v in asdict(r).items() if k != "condition" or v} for r in self.reasons
        ]
        applied = {"exemptions": exemptions, "reasons": reasons, "files": self.files}
        return hashlib.sha256(json.dumps(applied, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def etag(self) -> str:
        encoded = json.dumps(self.as_dict(), sort_keys=True).encode()
        return hashlib.sha256(encoded).hexdigest()[:32]


@dataclass(frozen=True)
class Resolved:
    index: int
    test: object
    key: str
    kind: str
    message: str
    triage: int


def backend_attributes(*, backend: Backend) -> dict[str, str]:
    """What conditions are held to on ``backend`` when CI sends no attributes: the backend's
    own (a variant's) merged with its current run's."""
    run = (
        BackendState.objects.filter(backend=backend)
        .values_list("current_run__attributes", flat=True)
        .first()
    )
    return {**(backend.attributes or {}), **(run or {})}


def backend_for_attributes(
    *, project: Project, backend: Backend, attributes: dict[str, str]
) -> Backend:
    """The variant of family ``backend`` that ``attributes`` name (``arch=gfx942``: rocm-gfx942)
    when it exists; else ``backend``. A read: a variant is created by its first upload."""
    if backend.family_id is not None:
        return backend
    name = variant_name(backend.name, attributes, project.variant_keys or [])
    if name is None:
        return backend
    return Backend.objects.filter(project=project, family=backend, name=name).first() or backend


def conditions_filter(exemptions: list, attributes: dict[str, str]) -> list:
    """The exemptions (anything with a ``condition``) that apply for ``attributes``."""
    return [e for e in exemptions if condition_applies(e.condition, attributes)]


def backend_exemptions(*, project: Project, backend: Backend) -> list[Exemption]:
    """The backend's unexpired triages that name tests (a test or a pattern), most specific
    first: a test, then a pattern, then intended before the rest, then the newest. Conditions
    are not applied here (``conditions_filter``)."""
    triages = (
        Triage.objects.filter(project=project)
        .filter(triages_in_force())
        .exclude(test__isnull=True, match="")
        .filter(triages_on_backend(backend))
        .select_related("test", "issue")
        .prefetch_related("backends")
        .distinct()
        .order_by("-created_at", "-pk")
    )
    return [_exemption(triage) for triage in sorted(triages, key=_specificity)]


def backend_reason_exemptions(*, project: Project, backend: Backend) -> list[ReasonExemption]:
    """The backend's unexpired triages that name a skip reason, oldest first."""
    triages = (
        Triage.objects.filter(project=project, reason__isnull=False)
        .filter(triages_in_force())
        .filter(triages_on_backend(backend))
        .select_related("reason")
        .distinct()
        .order_by("pk")
    )
    return [
        ReasonExemption(
            id=t.pk, match=f"reason: {t.reason.text}", kind=t.kind, condition=t.condition
        )
        for t in triages
    ]


def passing_exemptions(*, backend: Backend) -> set[int]:
    """The exemptions of ``backend`` whose every test passed in its latest probe run."""
    return set(
        ProbeOutcome.objects.filter(backend=backend, tests__gt=0, passed=F("tests")).values_list(
            "triage_id", flat=True
        )
    )


def manifest_build(
    *, project: Project, backend: Backend, attributes: dict[str, str] | None = None
) -> Manifest:
    """``backend``'s manifest, its conditioned exemptions held to ``attributes`` (None: the
    backend's current ones, ``backend_attributes``)."""
    candidates = backend_exemptions(project=project, backend=backend)
    reasons = backend_reason_exemptions(project=project, backend=backend)
    if attributes is None and any(e.condition for e in [*candidates, *reasons]):
        attributes = backend_attributes(backend=backend)  # read only when a condition asks
    passing = passing_exemptions(backend=backend)
    exemptions = [
        replace(e, passes_now=e.id in passing)
        for e in conditions_filter(candidates, attributes or {})
    ]
    removing = [e.regex for e in exemptions if e.file_level and e.kind in SKIPPING_KINDS]
    reference_files = set(
        FileCell.objects.filter(backend_id=project.reference_backend_id)
        .exclude(file="")
        .values_list("file", flat=True)
    )
    left_out = {f for f in reference_files if any(file_matches(regex, f) for regex in removing)}
    files = sorted(reference_files - left_out)
    # Every timed file of the backend, those told to run kept here: naming thousands of files
    # in the query cost more than reading the few the backend has and the manifest lacks.
    told = set(files)
    durations = {
        file: seconds
        for file, seconds in FileCell.objects.filter(backend=backend, duration__isnull=False)
        .order_by("file")
        .values_list("file", "duration")
        if file in told
    }
    return Manifest(
        project=project.slug,
        backend=backend.name,
        reference=project.reference_backend.name,
        exemptions=exemptions,
        files=files,
        durations={f: round(seconds, 3) for f, seconds in durations.items()},
        left_out=sorted(left_out),
        reasons=conditions_filter(reasons, attributes or {}),
    )


def manifest_resolve(
    *,
    project: Project,
    backend: Backend,
    tests: Sequence[object],
    exemptions: list[Exemption] | None = None,
) -> list[Resolved]:
    """The items of ``tests`` (runner IDs; see ``parity.pure.normalize.runner_ids``) that an
    exemption of ``backend`` (``exemptions``: a manifest's, already read) names, each with the
    most specific exemption. Raises ``RunnerIdError`` naming the first item that names no test."""
    if exemptions is None:
        exemptions = backend_exemptions(project=project, backend=backend)
    if not exemptions:
        return []
    pick, rules = _ExemptionIndex(exemptions).pick, project.normalization()
    resolved = []
    for index, item in enumerate(tests):
        key = runner_identity(item, rules).key
        exemption = pick(key)
        if exemption is not None:
            resolved.append(
                Resolved(
                    index=index,
                    test=item,
                    key=key,
                    kind=exemption.kind,
                    message=exemption.message,
                    triage=exemption.id,
                )
            )
    return resolved


class _ExemptionIndex:
    """The first exemption (most specific first) naming a key, as the engine picks: those that
    name one test, one file or one class's test in any file are looked up by that part of the
    key; only globs are tried one by one (a large suite resolves in one pass)."""

    def __init__(self, exemptions: list[Exemption]) -> None:
        self.exact: dict[str, dict[str, tuple[int, Exemption]]] = {
            "key": {},
            "file": {},
            "anyfile": {},
        }
        self.globs: list[tuple[int, Exemption]] = []
        for rank, exemption in enumerate(exemptions):
            if exemption.shape == "glob":
                self.globs.append((rank, exemption))
            else:
                self.exact[exemption.shape].setdefault(exemption.match, (rank, exemption))

    def pick(self, key: str) -> Exemption | None:
        file, any_file = key_parts(key)
        found = [
            self.exact["key"].get(key),
            self.exact["file"].get(file) if file is not None else None,
            self.exact["anyfile"].get(any_file) if any_file is not None else None,
            next(((r, e) for r, e in self.globs if key_matches(e.regex, key)), None),
        ]
        best = min((f for f in found if f is not None), default=None, key=lambda f: f[0])
        return best[1] if best else None


def exemption_reason(triage: Triage) -> str:
    """What CI says an exemption skips for: its note, or its kind's default."""
    return triage.note or DEFAULT_REASONS.get(triage.kind, triage.kind)


def _exemption(triage: Triage) -> Exemption:
    if triage.test is not None:
        match, regex, shape = triage.test.key, "", "key"  # found by its key, not a regex
    else:
        match, regex, shape = triage.match, triage.match_regex, triage.match_shape
    issues = issue_urls(reason=None, triage=triage)
    issue = issues[0] if issues else None
    reason = exemption_reason(triage)
    return Exemption(
        id=triage.pk,
        match=match,
        kind=triage.kind,
        reason=reason,
        issue=issue,
        expires=triage.expires_on.isoformat() if triage.expires_on else None,
        message=f"{reason} ({issue})" if issue else reason,
        file_level=triage.test is None and is_file_level(triage.match),
        regex=regex,
        shape=shape,
        condition=triage.condition,
    )


def _specificity(triage: Triage) -> tuple[bool, bool, bool]:
    # The engine's order (parity.definitions.triage_picks): intended first, then a test over a
    # pattern, named backends over all; the sort is stable, so ties stay newest first.
    return (
        triage.kind != TriageKind.INTENDED,
        triage.test_id is None,
        not triage.backends.all(),
    )
